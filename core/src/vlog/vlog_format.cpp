#include "vlog/vlog_format.h"

#include "util/coding.h"
#include "util/crc32c.h"

namespace skv::vlog {

uint32_t entry_crc(uint32_t key_len, uint32_t value_len, std::string_view body) {
  char lengths[8];
  encode_fixed32(lengths, key_len);
  encode_fixed32(lengths + 4, value_len);
  uint32_t crc = crc32c::value(lengths, sizeof(lengths));
  return crc32c::mask(crc32c::extend(crc, body.data(), body.size()));
}

// entry := masked_crc:fixed32 key_len:fixed32 value_len:fixed32 key value
// masked_crc = mask(CRC32C(key_len ‖ value_len ‖ key ‖ value))
void encode_entry(std::string_view key, std::string_view value, std::string* dst) {
  char header[kEntryHeaderSize];
  const auto key_len = static_cast<uint32_t>(key.size());
  const auto value_len = static_cast<uint32_t>(value.size());
  encode_fixed32(header + 4, key_len);
  encode_fixed32(header + 8, value_len);
  uint32_t crc = crc32c::value(header + 4, 8);
  crc = crc32c::extend(crc, key.data(), key.size());
  crc = crc32c::extend(crc, value.data(), value.size());
  encode_fixed32(header, crc32c::mask(crc));
  dst->append(header, kEntryHeaderSize);
  dst->append(key.data(), key.size());
  dst->append(value.data(), value.size());
}

// sealed_entry := masked_crc key_len value_len seal(position, key ‖ value)
// masked_crc = mask(CRC32C(key_len ‖ value_len ‖ sealed body))
void encode_sealed_entry(const crypto::FileCipher& cipher, uint64_t position, std::string_view key,
                         std::string_view value, std::string* dst) {
  std::string plain;
  plain.reserve(key.size() + value.size());
  plain.append(key.data(), key.size());
  plain.append(value.data(), value.size());
  const size_t start = dst->size();
  char header[kEntryHeaderSize];
  encode_fixed32(header + 4, static_cast<uint32_t>(key.size()));
  encode_fixed32(header + 8, static_cast<uint32_t>(value.size()));
  dst->append(header, kEntryHeaderSize);
  cipher.seal(position, plain, dst);
  const std::string_view body(dst->data() + start + kEntryHeaderSize,
                              dst->size() - start - kEntryHeaderSize);
  encode_fixed32(dst->data() + start, entry_crc(static_cast<uint32_t>(key.size()),
                                                static_cast<uint32_t>(value.size()), body));
}

}  // namespace skv::vlog
