// LogWindow: how the readers of append-only files (WAL segments, the manifest, value logs) read
// a LogFile: through a window of up to kChunk bytes kept in memory, so that a file of small
// records costs one platform read per window, not one per record. It also holds what those
// readers share about the file's start: a header a crash cut short is told from a bad one here.
//
// The file's size is taken by reset(); bytes appended after that are not seen.
//
// Thread safety: one window is used by one thread at a time.

#ifndef SKV_UTIL_LOG_WINDOW_H_
#define SKV_UTIL_LOG_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "format/file_header.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

class LogWindow {
 public:
  static constexpr size_t kChunk = size_t{256} << 10;

  // Does not own `file`, which must outlive the window. Call reset() before reading.
  explicit LogWindow(const LogFile* file) : file_(file) {}
  LogWindow(const LogWindow&) = delete;
  LogWindow& operator=(const LogWindow&) = delete;

  // Takes the file's current size and forgets the window.
  void reset();
  uint64_t file_size() const { return file_size_; }

  // The `n` bytes at `offset`, valid until the next call. IO naming the file if the platform
  // returns fewer. REQUIRES: offset + n <= file_size(), n <= kChunk.
  Result<std::string_view> fetch(uint64_t offset, size_t n);
  // The `n` bytes at `offset` copied into *out, in one platform read (for records larger than
  // a window). REQUIRES: offset + n <= file_size().
  Status read_exact(uint64_t offset, size_t n, std::string* out);
  // Whether every byte from `offset` to the end of the file is zero.
  Result<bool> zero_from(uint64_t offset);
  // CRC32C extended from `crc` over the `n` bytes at `offset`, read a window at a time.
  // REQUIRES: offset + n <= file_size().
  Result<uint32_t> extend_crc(uint32_t crc, uint64_t offset, uint64_t n);

  // The file's first bytes (at most kFileHeaderSize), for decoding its header.
  Result<std::string_view> header_bytes();
  // After `bytes` (from header_bytes()) failed to decode as a header of `kind`: whether they are
  // one a crash cut short, that is a plausible start of such a header (magic, kind and flags as
  // a writer writes them; the version is checked once the header is whole) followed only by
  // zero bytes to the end of the file. An empty file is one too.
  Result<bool> header_torn(std::string_view bytes, FileKind kind);

 private:
  const LogFile* file_;
  uint64_t file_size_ = 0;
  // [window_offset_, window_offset_ + window_.size()), viewing buffer_ or memory the file owns.
  std::string buffer_;
  std::string_view window_;
  uint64_t window_offset_ = 0;
};

}  // namespace skv

#endif  // SKV_UTIL_LOG_WINDOW_H_
