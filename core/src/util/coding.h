// Little-endian fixed-width integers and LEB128 varints: the byte encodings every skv file uses.
//
// Encoders append to a std::string. Decoders read from a std::string_view and advance it; they
// return false (and leave the output unspecified) when the input is too short or a varint is
// malformed, so callers turn that into a Corruption status. They never read past the input.
//
// Thread safety: pure functions.

#ifndef SKV_UTIL_CODING_H_
#define SKV_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace skv {

constexpr size_t kMaxVarint32Bytes = 5;
constexpr size_t kMaxVarint64Bytes = 10;

inline void encode_fixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void encode_fixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
inline uint32_t decode_fixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) | (static_cast<uint32_t>(u[3]) << 24);
}
inline uint64_t decode_fixed64(const char* p) {
  return static_cast<uint64_t>(decode_fixed32(p)) |
         (static_cast<uint64_t>(decode_fixed32(p + 4)) << 32);
}

inline void put_fixed32(std::string* dst, uint32_t v) {
  char buf[4];
  encode_fixed32(buf, v);
  dst->append(buf, 4);
}
inline void put_fixed64(std::string* dst, uint64_t v) {
  char buf[8];
  encode_fixed64(buf, v);
  dst->append(buf, 8);
}

// Writes v as a varint at dst (which must have room for kMaxVarint64Bytes); returns the byte
// after the last one written.
inline char* encode_varint64(char* dst, uint64_t v) {
  auto* p = reinterpret_cast<unsigned char*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<unsigned char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<unsigned char>(v);
  return reinterpret_cast<char*>(p);
}
inline char* encode_varint32(char* dst, uint32_t v) { return encode_varint64(dst, v); }

inline void put_varint64(std::string* dst, uint64_t v) {
  char buf[kMaxVarint64Bytes];
  dst->append(buf, static_cast<size_t>(encode_varint64(buf, v) - buf));
}
inline void put_varint32(std::string* dst, uint32_t v) { put_varint64(dst, v); }

inline size_t varint_length(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Appends varint(len) followed by the bytes.
inline void put_length_prefixed(std::string* dst, std::string_view value) {
  put_varint64(dst, value.size());
  dst->append(value.data(), value.size());
}

// Parses a varint from [p, limit). Returns the byte after it, or nullptr if the input ends early
// or the varint is longer than allowed.
inline const char* decode_varint64(const char* p, const char* limit, uint64_t* v) {
  uint64_t result = 0;
  for (uint32_t shift = 0; shift <= 63 && p < limit; shift += 7) {
    uint64_t byte = static_cast<unsigned char>(*p++);
    if (shift == 63 && byte > 1) return nullptr;  // would overflow 64 bits
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}
inline const char* decode_varint32(const char* p, const char* limit, uint32_t* v) {
  // Most lengths and counts fit in one byte, or two: decoded here without the general loop.
  if (p < limit) {
    const uint32_t b0 = static_cast<unsigned char>(p[0]);
    if (b0 < 0x80) {
      *v = b0;
      return p + 1;
    }
    if (p + 1 < limit) {
      const uint32_t b1 = static_cast<unsigned char>(p[1]);
      if (b1 < 0x80) {
        *v = (b0 & 0x7f) | (b1 << 7);
        return p + 2;
      }
    }
  }
  uint64_t wide = 0;
  const char* q = decode_varint64(p, limit, &wide);
  if (q == nullptr || wide > 0xffffffffu) return nullptr;
  *v = static_cast<uint32_t>(wide);
  return q;
}

inline bool get_fixed32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = decode_fixed32(in->data());
  in->remove_prefix(4);
  return true;
}
inline bool get_fixed64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = decode_fixed64(in->data());
  in->remove_prefix(8);
  return true;
}
inline bool get_varint64(std::string_view* in, uint64_t* v) {
  const char* q = decode_varint64(in->data(), in->data() + in->size(), v);
  if (q == nullptr) return false;
  in->remove_prefix(static_cast<size_t>(q - in->data()));
  return true;
}
inline bool get_varint32(std::string_view* in, uint32_t* v) {
  const char* q = decode_varint32(in->data(), in->data() + in->size(), v);
  if (q == nullptr) return false;
  in->remove_prefix(static_cast<size_t>(q - in->data()));
  return true;
}
// Reads varint(len) and then len bytes; *out views into the input.
inline bool get_length_prefixed(std::string_view* in, std::string_view* out) {
  uint64_t len = 0;
  if (!get_varint64(in, &len) || len > in->size()) return false;
  *out = in->substr(0, static_cast<size_t>(len));
  in->remove_prefix(static_cast<size_t>(len));
  return true;
}

}  // namespace skv

#endif  // SKV_UTIL_CODING_H_
