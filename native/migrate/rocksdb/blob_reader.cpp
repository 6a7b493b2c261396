#include "native/migrate/rocksdb/blob_reader.h"

#include <cstdio>

#include "native/migrate/rocksdb/block.h"
#include "native/migrate/rocksdb/decode.h"
#include "util/crc32c.h"

namespace skv::migration::rocksdb {

Result<const SourceFile*> BlobReader::file(uint64_t number, const std::string& where) {
  auto it = files_.find(number);
  if (it != files_.end()) return &it->second;
  if (live_.count(number) == 0) {
    return Status::corruption(where + ": points into blob file " + std::to_string(number) +
                              ", which the MANIFEST does not list");
  }
  char name[32];
  std::snprintf(name, sizeof name, "/%06llu.blob", static_cast<unsigned long long>(number));
  auto f = SourceFile::open(dir_ + name);
  if (!f.ok()) return f.status();
  std::string h;
  if (Status s = f->read_at(0, 30, &h); !s.ok()) return s;
  if (load32(h.data()) != 0x00248f37u) return Status::corruption(f->where(0, "blob file magic"));
  if (load32(h.data() + 4) != 1) {
    return Status::not_supported(
        f->where(4, "blob file version " + std::to_string(load32(h.data() + 4))));
  }
  if (h[12] & 1) return Status::not_supported(f->where(12, "blob file with TTL"));
  compression_[number] = static_cast<unsigned char>(h[13]);
  bytes_read_ += 30;
  auto [pos, ok] = files_.emplace(number, std::move(*f));
  (void)ok;
  return &pos->second;
}

Status BlobReader::resolve(std::string_view key, std::string_view idx, const std::string& where,
                           std::string* out) {
  if (idx.empty()) return Status::corruption(where + ": empty blob index");
  unsigned kind = static_cast<unsigned char>(idx[0]);
  idx.remove_prefix(1);
  if (kind != 1) {
    return Status::not_supported(where + ": blob index of type " + std::to_string(kind) +
                                 " (TTL blobs) is not read");
  }
  uint64_t number, offset, size;
  if (!get_varint64(&idx, &number) || !get_varint64(&idx, &offset) || !get_varint64(&idx, &size) ||
      idx.size() != 1) {
    return Status::corruption(where + ": blob index");
  }
  unsigned comp = static_cast<unsigned char>(idx[0]);
  auto f = file(number, where);
  if (!f.ok()) return f.status();
  const SourceFile& bf = **f;
  if (comp != compression_[number]) {
    return Status::corruption(where + ": blob index compression differs from its file's");
  }
  uint64_t rec = offset - key.size() - 32;
  if (offset < key.size() + 32 + 30 || size > (1ull << 31)) {
    return Status::corruption(bf.where(offset, "blob index offset"));
  }
  std::string buf;
  if (Status s = bf.read_at(rec, 32 + key.size() + static_cast<size_t>(size), &buf); !s.ok())
    return s;
  bytes_read_ += buf.size();
  if (crc32c::unmask(load32(buf.data() + 24)) != crc32c::value(buf.data(), 24)) {
    return Status::corruption(bf.where(rec, "blob record header checksum mismatch"));
  }
  if (load64(buf.data()) != key.size() || load64(buf.data() + 8) != size) {
    return Status::corruption(bf.where(rec, "blob record does not match its index"));
  }
  if (crc32c::unmask(load32(buf.data() + 28)) != crc32c::value(buf.data() + 32, buf.size() - 32)) {
    return Status::corruption(bf.where(rec, "blob record checksum mismatch"));
  }
  if (std::string_view(buf.data() + 32, key.size()) != key) {
    return Status::corruption(bf.where(rec, "blob record holds another key"));
  }
  std::string_view stored(buf.data() + 32 + key.size(), static_cast<size_t>(size));
  return decompress_block(bf, offset, comp, 2, std::string(), stored, out);
}

}  // namespace skv::migration::rocksdb
