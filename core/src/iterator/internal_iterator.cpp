#include "iterator/internal_iterator.h"

#include "format/internal_key.h"

namespace skv {

void InternalIterator::seek_for_prev(std::string_view target) {
  seek(target);
  if (!valid()) {
    if (status().ok()) seek_last();
    return;
  }
  if (compare_internal_keys(key(), target) > 0) prev();
}

void seek_before_user_key(InternalIterator* it, std::string_view user_key) {
  // The seek key sorts before every entry of `user_key`: land on the first entry at or after it,
  // then step back once (or, past the end, to the very last entry).
  it->seek(make_seek_key(user_key, kMaxSequenceNumber));
  if (it->valid()) {
    it->prev();
  } else if (it->status().ok()) {
    it->seek_last();
  }
}

namespace {

class EmptyIterator final : public InternalIterator {
 public:
  explicit EmptyIterator(Status s) : status_(std::move(s)) {}
  bool valid() const override { return false; }
  void seek_first() override {}
  void seek_last() override {}
  void seek(std::string_view) override {}
  void next() override {}
  void prev() override {}
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  Status status() const override { return status_; }

 private:
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> new_empty_iterator(Status status) {
  return std::make_unique<EmptyIterator>(std::move(status));
}

}  // namespace skv
