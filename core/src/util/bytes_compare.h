// Bytewise three-way comparison of byte strings, as unsigned bytes (the order of
// std::string_view::compare), for the engine's hottest comparisons: every key a merge, a skip list
// or a block search compares goes through it.
//
// Keys that share a long prefix, and the versions of one key, compare equal over many bytes. The
// library memcmp of the WebAssembly build walks them a byte at a time, so on a little-endian
// target the strings are compared eight bytes at a time, and the first differing byte is found
// from the lowest set bit of the two words' XOR. Elsewhere it is memcmp.
//
// Thread safety: a pure function.

#ifndef SKV_UTIL_BYTES_COMPARE_H_
#define SKV_UTIL_BYTES_COMPARE_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace skv {

// Negative, zero or positive as `a` sorts before, equal to or after `b`.
inline int compare_bytes(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  if constexpr (std::endian::native == std::endian::little) {
    const auto* pa = reinterpret_cast<const unsigned char*>(a.data());
    const auto* pb = reinterpret_cast<const unsigned char*>(b.data());
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t wa = 0;
      uint64_t wb = 0;
      std::memcpy(&wa, pa + i, 8);
      std::memcpy(&wb, pb + i, 8);
      if (wa != wb) {
        // Little-endian: the lowest differing bit lies in the first differing byte.
        const size_t at = i + static_cast<size_t>(std::countr_zero(wa ^ wb)) / 8;
        return pa[at] < pb[at] ? -1 : 1;
      }
    }
    for (; i < n; ++i) {
      if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
    }
  } else {
    if (n > 0) {
      const int r = std::memcmp(a.data(), b.data(), n);
      if (r != 0) return r;
    }
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

}  // namespace skv

#endif  // SKV_UTIL_BYTES_COMPARE_H_
