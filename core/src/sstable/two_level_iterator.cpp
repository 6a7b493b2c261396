#include "sstable/two_level_iterator.h"

#include <cassert>

namespace skv {

namespace {

class TwoLevelIterator final : public InternalIterator {
 public:
  TwoLevelIterator(std::unique_ptr<BlockIterator> index, DataBlockLoader loader,
                   std::string_view file)
      : index_(std::move(index)), loader_(std::move(loader)), file_(file) {}

  bool valid() const override { return data_ != nullptr && data_->valid(); }

  void seek_first() override {
    if (!status_.ok()) return;
    index_->seek_first();
    open_data_block();
    if (data_ != nullptr) data_->seek_first();
    skip_empty_forward();
  }

  void seek_last() override {
    if (!status_.ok()) return;
    index_->seek_last();
    open_data_block();
    if (data_ != nullptr) data_->seek_last();
    skip_empty_backward();
  }

  void seek(std::string_view target) override {
    if (!status_.ok()) return;
    index_->seek(target);
    open_data_block();
    if (data_ != nullptr) data_->seek(target);
    skip_empty_forward();
  }

  // A data block iterator that is still valid has met no error (a block iterator stops at its
  // first one), so the error checks run only when it leaves its block.
  void next() override {
    assert(valid());
    data_->next();
    if (!data_->valid()) skip_empty_forward();
  }

  void prev() override {
    assert(valid());
    data_->prev();
    if (!data_->valid()) skip_empty_backward();
  }

  std::string_view key() const override { return data_->key(); }
  std::string_view value() const override { return data_->value(); }
  Status status() const override { return status_; }

 private:
  void fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
    data_.reset();
    data_offset_ = kNoBlock;
  }

  // Collects an error from the index or the data iterator. True if the iterator has failed.
  bool check_errors() {
    if (!status_.ok()) return true;
    if (!index_->status().ok()) {
      fail(index_->status());
      return true;
    }
    if (data_ != nullptr && !data_->status().ok()) {
      fail(data_->status());
      return true;
    }
    return false;
  }

  // Points data_ at the block the index is on (null when the index is exhausted or on error).
  void open_data_block() {
    if (check_errors()) return;
    if (!index_->valid()) {
      data_.reset();
      data_offset_ = kNoBlock;
      return;
    }
    std::string_view v = index_->value();
    BlockHandle h;
    if (!decode_block_handle(&v, &h) || !v.empty()) {
      fail(Status::corruption(std::string(file_) + ": bad block handle in index block"));
      return;
    }
    if (data_ != nullptr && h.offset == data_offset_) return;  // already open
    auto r = loader_(h);
    if (!r.ok()) {
      fail(r.status());
      return;
    }
    data_ = std::move(r).value();
    data_offset_ = h.offset;
  }

  void skip_empty_forward() {
    while (!check_errors() && (data_ == nullptr || !data_->valid())) {
      if (!index_->valid()) {
        data_.reset();
        data_offset_ = kNoBlock;
        return;
      }
      index_->next();
      open_data_block();
      if (data_ != nullptr) data_->seek_first();
    }
  }

  void skip_empty_backward() {
    while (!check_errors() && (data_ == nullptr || !data_->valid())) {
      if (!index_->valid()) {
        data_.reset();
        data_offset_ = kNoBlock;
        return;
      }
      index_->prev();
      open_data_block();
      if (data_ != nullptr) data_->seek_last();
    }
  }

  static constexpr uint64_t kNoBlock = ~uint64_t{0};

  std::unique_ptr<BlockIterator> index_;
  DataBlockLoader loader_;
  std::string_view file_;
  std::unique_ptr<BlockIterator> data_;
  uint64_t data_offset_ = kNoBlock;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> new_two_level_iterator(std::unique_ptr<BlockIterator> index,
                                                         DataBlockLoader loader,
                                                         std::string_view file) {
  return std::make_unique<TwoLevelIterator>(std::move(index), std::move(loader), file);
}

}  // namespace skv
