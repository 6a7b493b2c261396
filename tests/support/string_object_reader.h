// StringObjectReader: an ObjectReader over a string, for tests that read files held in memory.
// It copies into the caller's scratch or (zero_copy) returns views of its own bytes, records every
// read it is asked for (offset and length), and fails with IOError any read that touches
// [fail_from, fail_to).
//
// Thread safety: none; one reader, one thread.

#ifndef SKV_TESTS_SUPPORT_STRING_OBJECT_READER_H_
#define SKV_TESTS_SUPPORT_STRING_OBJECT_READER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv::testing {

class StringObjectReader final : public ObjectReader {
 public:
  StringObjectReader(std::string name, std::string data, bool zero_copy = false)
      : name_(std::move(name)), data_(std::move(data)), zero_copy_(zero_copy) {}

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return data_.size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    reads.emplace_back(offset, n);
    if (offset < fail_to && offset + n > fail_from) return Status::io_error(name_ + ": injected");
    if (offset >= data_.size()) {
      *result = {};
      return Status::OK();
    }
    n = std::min<size_t>(n, data_.size() - offset);
    if (zero_copy_) {
      *result = std::string_view(data_).substr(offset, n);
    } else {
      std::memcpy(scratch, data_.data() + offset, n);
      *result = std::string_view(scratch, n);
    }
    return Status::OK();
  }

  int read_count() const { return static_cast<int>(reads.size()); }

  mutable std::vector<std::pair<uint64_t, size_t>> reads;
  uint64_t fail_from = 0, fail_to = 0;

 private:
  std::string name_;
  std::string data_;
  bool zero_copy_;
};

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_STRING_OBJECT_READER_H_
