// CRC32C: the CPU instruction on x86-64 with SSE 4.2 (checked at run time), else slicing-by-8
// over a table built at first use.

#include "util/crc32c.h"

#include <array>
#include <cstring>

namespace skv::crc32c {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli polynomial

struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};

constexpr Tables kTables;

inline uint32_t load32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SKV_CRC32C_SSE42 1
// The SSE 4.2 crc32 instruction computes exactly this CRC (the Castagnoli polynomial, reflected),
// eight bytes per instruction. Compiled for SSE 4.2 on its own and used only when the CPU has it.
__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t extend(uint32_t crc, const char* data, size_t n) {
#ifdef SKV_CRC32C_SSE42
  if (kHaveSse42) return extend_sse42(crc, data, n);
#endif
  return extend_portable(crc, data, n);
}

uint32_t extend_portable(uint32_t crc, const char* data, size_t n) {
  const auto& t = kTables.t;
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo = load32(p) ^ c;
    uint32_t hi = load32(p + 4);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
        t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = t[0][(c ^ *p++) & 0xff] ^ (c >> 8);
  return ~c;
}

}  // namespace skv::crc32c
