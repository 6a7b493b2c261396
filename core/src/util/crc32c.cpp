// CRC32C: the CPU instruction on x86-64 with SSE 4.2 (checked at run time), over three stripes
// at once for long buffers, else slicing-by-8 over a table built at compile time.

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
//
// One instruction's result is ready three cycles after it starts, but a new one can start every
// cycle, so a single chain of them runs at a third of the possible rate. A long buffer is
// therefore cut into three equal stripes whose CRCs run side by side, each from its own register,
// and are then joined. The CRC register is linear: continuing register `s` over bytes Y gives
// (s continued over |Y| zero bytes) XOR (0 continued over Y). Continuing over a fixed number of
// zero bytes is a fixed linear map of the 32-bit register, applied as four table lookups
// (ZeroShift), so each join costs eight lookups however long the stripes are.

// The register continued over `n` zero bytes, as a map of the register: t[k][b] is the image of
// byte b in byte position k, and apply() XORs the four images.
struct ZeroShift {
  std::array<std::array<uint32_t, 256>, 4> t{};

  explicit ZeroShift(size_t n) {
    std::array<uint32_t, 32> image{};  // the image of each register bit
    for (int bit = 0; bit < 32; ++bit) {
      uint32_t c = uint32_t{1} << bit;
      for (size_t i = 0; i < n; ++i) c = (c >> 8) ^ kTables.t[0][c & 0xff];
      image[bit] = c;
    }
    for (int k = 0; k < 4; ++k) {
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t v = 0;
        for (int j = 0; j < 8; ++j) {
          if (b & (1u << j)) v ^= image[8 * k + j];
        }
        t[k][b] = v;
      }
    }
  }

  uint32_t apply(uint32_t s) const {
    return t[0][s & 0xff] ^ t[1][(s >> 8) & 0xff] ^ t[2][(s >> 16) & 0xff] ^ t[3][s >> 24];
  }
};

constexpr size_t kLongStripe = 2048;  // buffers of 6 KiB and more: data blocks
constexpr size_t kShortStripe = 256;  // from 768 bytes: larger WAL records, block tails

inline uint64_t load64(const unsigned char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

// Consumes whole runs of three stripes of `stripe` bytes from *p, continuing register *c.
__attribute__((target("sse4.2"))) void extend_three_stripes(uint64_t* c, const unsigned char** p,
                                                            size_t* n, size_t stripe,
                                                            const ZeroShift& shift) {
  while (*n >= 3 * stripe) {
    const unsigned char* a = *p;
    uint64_t c0 = *c, c1 = 0, c2 = 0;
    for (size_t i = 0; i < stripe; i += 8) {
      c0 = __builtin_ia32_crc32di(c0, load64(a + i));
      c1 = __builtin_ia32_crc32di(c1, load64(a + stripe + i));
      c2 = __builtin_ia32_crc32di(c2, load64(a + 2 * stripe + i));
    }
    const uint32_t first_two = shift.apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
    *c = shift.apply(first_two) ^ static_cast<uint32_t>(c2);
    *p += 3 * stripe;
    *n -= 3 * stripe;
  }
}

__attribute__((target("sse4.2"))) uint32_t extend_sse42(uint32_t crc, const char* data, size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  uint64_t c = static_cast<uint32_t>(~crc);
  if (n >= 3 * kShortStripe) {
    static const ZeroShift kLongShift(kLongStripe);
    static const ZeroShift kShortShift(kShortStripe);
    extend_three_stripes(&c, &p, &n, kLongStripe, kLongShift);
    extend_three_stripes(&c, &p, &n, kShortStripe, kShortShift);
  }
  while (n >= 8) {
    c = __builtin_ia32_crc32di(c, load64(p));
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
