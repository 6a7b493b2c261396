#include "format/file_header.h"

#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace skv {

void encode_file_header(const FileHeader& h, std::string* dst) {
  char buf[kFileHeaderSize] = {};
  encode_fixed32(buf, kFileMagic);
  buf[4] = static_cast<char>(h.format_version & 0xff);
  buf[5] = static_cast<char>(h.format_version >> 8);
  buf[6] = static_cast<char>(h.kind);
  buf[7] = 0;
  encode_fixed64(buf + 8, h.file_number);
  buf[16] = static_cast<char>(h.cipher);
  encode_fixed32(buf + 20, h.key_id);
  std::memcpy(buf + 24, h.salt.data(), h.salt.size());
  std::memcpy(buf + 40, h.db_id.data(), h.db_id.size());
  encode_fixed32(buf + 56, h.key_check);
  encode_fixed32(buf + 60, crc32c::mask(crc32c::value(buf, 60)));
  dst->append(buf, kFileHeaderSize);
}

Result<FileHeader> decode_file_header(std::string_view input, FileKind expected_kind,
                                      std::string_view file) {
  auto bad = [&](const char* what) {
    return Status::corruption(std::string(file) + ": bad file header at offset 0: " + what);
  };
  if (input.size() < kFileHeaderSize) return bad("file shorter than its header");
  const char* p = input.data();
  if (decode_fixed32(p) != kFileMagic) return bad("wrong magic");
  if (crc32c::unmask(decode_fixed32(p + 60)) != crc32c::value(p, 60)) return bad("checksum");
  FileHeader h;
  h.format_version = static_cast<uint16_t>(static_cast<unsigned char>(p[4]) |
                                           (static_cast<unsigned char>(p[5]) << 8));
  if (h.format_version == 0 || h.format_version > kFormatVersion) {
    return bad("unsupported format version");
  }
  if (h.format_version < kOldestReadableFormatVersion) {
    return Status::not_supported(std::string(file) + ": written in format version " +
                                 std::to_string(h.format_version) +
                                 ", which this build no longer reads (it reads versions " +
                                 std::to_string(kOldestReadableFormatVersion) + " to " +
                                 std::to_string(kFormatVersion) + ")");
  }
  h.kind = static_cast<FileKind>(static_cast<unsigned char>(p[6]));
  if (h.kind != expected_kind) return bad("unexpected file kind");
  h.file_number = decode_fixed64(p + 8);
  h.cipher = static_cast<uint8_t>(p[16]);
  h.key_id = decode_fixed32(p + 20);
  std::memcpy(h.salt.data(), p + 24, h.salt.size());
  std::memcpy(h.db_id.data(), p + 40, h.db_id.size());
  h.key_check = decode_fixed32(p + 56);
  return h;
}

}  // namespace skv
