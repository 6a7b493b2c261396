#include "sstable/readahead_reader.h"

#include <algorithm>

namespace skv {

ReadaheadReader::ReadaheadReader(const ObjectReader& file, size_t max_window)
    : file_(file), max_window_(std::max<size_t>(max_window, 1)) {}

Status ReadaheadReader::read_at(uint64_t offset, size_t n, char* scratch,
                                std::string_view* result) const {
  if (len_ != 0 && offset >= start_ && n <= len_ && offset - start_ <= len_ - n) {
    *result = std::string_view(buf_.get() + (offset - start_), n);
    next_ = offset + n;
    return Status::OK();
  }
  // A miss: grow the window when this read starts where the last one ended. Anything else (a
  // seek, blocks skipped because the cache had them, perhaps from another sweep of the same range)
  // starts again from this read's size, so sweeps in step do not each read the same window.
  window_ = offset == next_ ? std::min(max_window_, std::max(window_ * 2, n)) : n;
  next_ = offset + n;
  if (n >= window_) {
    ++file_reads_;
    return file_.read_at(offset, n, scratch, result);
  }
  if (buf_ == nullptr) buf_.reset(new char[max_window_]);
  len_ = 0;
  std::string_view got;
  ++file_reads_;
  Status s = file_.read_at(offset, window_, buf_.get(), &got);
  if (!s.ok()) return s;
  if (got.data() != buf_.get()) std::copy(got.begin(), got.end(), buf_.get());
  start_ = offset;
  len_ = got.size();
  *result = std::string_view(buf_.get(), std::min(n, len_));
  return Status::OK();
}

}  // namespace skv
