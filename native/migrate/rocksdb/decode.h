// Decoding helpers for RocksDB's on-disk encodings: little-endian fixed-width integers, LEB128
// varints and length-prefixed strings, read from a view that shrinks as fields are taken.
//
// Thread safety: pure functions over caller-owned bytes.

#ifndef SKV_NATIVE_MIGRATE_ROCKSDB_DECODE_H_
#define SKV_NATIVE_MIGRATE_ROCKSDB_DECODE_H_

#include <cstdint>
#include <cstring>
#include <string_view>

namespace skv::migration::rocksdb {

inline uint32_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // the build targets little-endian hosts only
}
inline uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline bool get_fixed32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = load32(in->data());
  in->remove_prefix(4);
  return true;
}
inline bool get_fixed64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = load64(in->data());
  in->remove_prefix(8);
  return true;
}
inline bool get_varint64(std::string_view* in, uint64_t* v) {
  uint64_t r = 0;
  for (unsigned shift = 0, i = 0; shift <= 63 && i < in->size(); shift += 7, ++i) {
    uint64_t b = static_cast<unsigned char>((*in)[i]);
    r |= (b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *v = r;
      return true;
    }
  }
  return false;
}
inline bool get_varint32(std::string_view* in, uint32_t* v) {
  std::string_view copy = *in;
  uint64_t r;
  if (!get_varint64(&copy, &r) || r > 0xffffffffu) return false;
  *in = copy;
  *v = static_cast<uint32_t>(r);
  return true;
}
inline bool get_lenprefixed(std::string_view* in, std::string_view* out) {
  uint32_t n;
  std::string_view copy = *in;
  if (!get_varint32(&copy, &n) || copy.size() < n) return false;
  *out = copy.substr(0, n);
  copy.remove_prefix(n);
  *in = copy;
  return true;
}

}  // namespace skv::migration::rocksdb

#endif  // SKV_NATIVE_MIGRATE_ROCKSDB_DECODE_H_
