// A reader for one sequential sweep of a table (a count, a compaction's input): it serves block
// reads from a window of the file it read in one call, so a sweep makes one read_at per window
// instead of one per block, into memory it already holds.
//
// The window starts at the size of the first block read and doubles on every read that starts
// where the previous one ended, up to `max_window`. Any other read (a seek, or blocks skipped
// because the cache held them, perhaps read by another sweep of the same range) starts again from
// its own size, so sweeps in step do not each fill a window. A read as large as the window goes
// straight to the file.
//
// It narrows ObjectReader's contract: a result that points into the window stays valid only until
// the next read_at. read_block (block_format.h) copies or decompresses what it read before it
// reads again, so it may use one.
//
// Thread safety: one thread at a time (each sweep has its own). The file it wraps must outlive it.

#ifndef SKV_SSTABLE_READAHEAD_READER_H_
#define SKV_SSTABLE_READAHEAD_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

class ReadaheadReader final : public ObjectReader {
 public:
  static constexpr size_t kDefaultMaxWindow = 256 * 1024;

  explicit ReadaheadReader(const ObjectReader& file, size_t max_window = kDefaultMaxWindow);

  const std::string& name() const override { return file_.name(); }
  uint64_t size() const override { return file_.size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch, std::string_view* result) const override;

  // How many reads went to the file (for tests).
  uint64_t file_reads() const { return file_reads_; }

 private:
  const ObjectReader& file_;
  const size_t max_window_;
  mutable std::unique_ptr<char[]> buf_;  // max_window_ bytes, allocated on first use
  mutable uint64_t start_ = 0;           // the window holds [start_, start_ + len_)
  mutable size_t len_ = 0;
  mutable uint64_t next_ = UINT64_MAX;  // where a sequential read would start
  mutable size_t window_ = 0;           // the next read ahead's size
  mutable uint64_t file_reads_ = 0;
};

}  // namespace skv

#endif  // SKV_SSTABLE_READAHEAD_READER_H_
