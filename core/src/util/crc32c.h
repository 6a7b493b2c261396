// CRC32C (Castagnoli), the checksum on every WAL record, block and manifest record.
//
// value() computes the plain CRC32C; extend() continues one. Stored checksums are masked (a
// rotation plus a constant) so that a CRC computed over bytes that themselves contain CRCs does
// not degenerate, and so that an all-zero region never carries a valid checksum.
//
// Thread safety: pure functions.

#ifndef SKV_UTIL_CRC32C_H_
#define SKV_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace skv::crc32c {

// Returns the CRC32C of data[0, n) continued from `crc` (the CRC of some earlier bytes). Uses
// the CPU's CRC32C instruction where there is one (x86-64 with SSE 4.2), else extend_portable().
uint32_t extend(uint32_t crc, const char* data, size_t n);

// The table-driven implementation (slicing by 8), on every platform; tests compare the two.
uint32_t extend_portable(uint32_t crc, const char* data, size_t n);

inline uint32_t value(const char* data, size_t n) { return extend(0, data, n); }

constexpr uint32_t kMaskDelta = 0xa282ead8u;

inline uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace skv::crc32c

#endif  // SKV_UTIL_CRC32C_H_
