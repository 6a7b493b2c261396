// StringObjectWriter: an ObjectWriter that appends to a string the caller owns, for tests and
// fuzz tools that build tables in memory. finish() and abort() do nothing.
//
// Thread safety: none; one writer, one thread.

#ifndef SKV_TESTS_SUPPORT_STRING_OBJECT_WRITER_H_
#define SKV_TESTS_SUPPORT_STRING_OBJECT_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv::testing {

class StringObjectWriter final : public ObjectWriter {
 public:
  explicit StringObjectWriter(std::string* out) : out_(out) {}
  Status append(std::string_view d) override {
    out_->append(d.data(), d.size());
    return Status::OK();
  }
  uint64_t size() const override { return out_->size(); }
  Status finish() override { return Status::OK(); }
  void abort() override {}

 private:
  std::string* out_;
};

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_STRING_OBJECT_WRITER_H_
