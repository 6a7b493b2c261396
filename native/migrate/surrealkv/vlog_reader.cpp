#include "native/migrate/surrealkv/vlog_reader.h"

#include <cstdio>

#include "util/status_macros.h"

namespace skv::migration::surrealkv {

namespace {

constexpr uint32_t kVLogMagic = 0x564C4F47;  // "VLOG"
constexpr uint16_t kVLogVersion = 1;
constexpr size_t kVLogHeaderSize = 31;
constexpr size_t kEntryHeader = 8;

}  // namespace

std::string numbered_path(const std::string& dir, uint64_t id, std::string_view ext) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020llu", static_cast<unsigned long long>(id));
  return dir + "/" + name + "." + std::string(ext);
}

Result<const SourceFile*> VLogReader::file(uint32_t id, const SourceFile& from,
                                           uint64_t from_offset) {
  auto it = files_.find(id);
  if (it != files_.end()) return &it->second;
  std::string path = numbered_path(dir_, id, "vlog");
  Result<SourceFile> opened = SourceFile::open(path);
  if (!opened.ok()) {
    if (opened.status().is_not_found()) {
      return Status::corruption(from.where(from_offset, "value pointer into value log " +
                                                            std::to_string(id) + ", but " + path +
                                                            " does not exist"));
    }
    return opened.status();
  }
  SourceFile f = std::move(opened).value();
  std::string header;
  SKV_RETURN_IF_ERROR(f.read_at(0, kVLogHeaderSize, &header));
  bytes_read_ += kVLogHeaderSize;
  Cursor c(header, 0);
  uint32_t magic = 0, file_id = 0, reserved = 0;
  uint16_t version = 0;
  uint64_t created_ms = 0, max_size = 0;
  uint8_t compression = 0;
  (void)(c.be32(&magic) && c.be16(&version) && c.be32(&file_id) && c.be64(&created_ms) &&
         c.be64(&max_size) && c.u8(&compression) && c.be32(&reserved));
  if (magic != kVLogMagic) return Status::corruption(f.where(0, "value log without its magic"));
  if (version != kVLogVersion) {
    return Status::not_supported(
        f.where(4, "value log of unknown version " + std::to_string(version)));
  }
  if (file_id != id) {
    return Status::corruption(f.where(6, "value log header names file " + std::to_string(file_id)));
  }
  if (compression != 0) {
    return Status::not_supported(
        f.where(26, "value log with unknown compression " + std::to_string(compression)));
  }
  return &files_.emplace(id, std::move(f)).first->second;
}

Status VLogReader::get(const ValuePointer& p, std::string_view internal_key, const SourceFile& from,
                       uint64_t from_offset, std::string* value) {
  SKV_ASSIGN_OR_RETURN(const SourceFile* f, file(p.file_id, from, from_offset));
  if (p.offset < kVLogHeaderSize) {
    return Status::corruption(from.where(from_offset, "value pointer to offset " +
                                                          std::to_string(p.offset) +
                                                          ", inside the header of " + f->path()));
  }
  uint64_t total = uint64_t{kEntryHeader} + p.key_size + p.value_size + 4;
  std::string entry;
  SKV_RETURN_IF_ERROR(f->read_at(p.offset, static_cast<size_t>(total), &entry));
  bytes_read_ += total;
  Cursor c(entry, p.offset);
  uint32_t klen = 0, vlen = 0, crc = 0;
  std::string_view key, val;
  (void)(c.be32(&klen) && c.be32(&vlen));
  if (klen != p.key_size || vlen != p.value_size) {
    return Status::corruption(
        f->where(p.offset, "value log entry lengths (" + std::to_string(klen) + ", " +
                               std::to_string(vlen) + ") differ from its pointer's"));
  }
  (void)(c.bytes(klen, &key) && c.bytes(vlen, &val) && c.be32(&crc));
  if (crc != p.crc || crc32_ieee(key, val) != crc) {
    return Status::corruption(f->where(p.offset, "value log entry fails its CRC-32 check"));
  }
  if (key != internal_key) {
    return Status::corruption(
        f->where(p.offset, "value log entry holds another key than the one pointing to it"));
  }
  value->assign(val);
  return Status::OK();
}

}  // namespace skv::migration::surrealkv
