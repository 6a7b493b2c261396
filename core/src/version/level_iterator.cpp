#include "version/level_iterator.h"

#include <algorithm>
#include <utility>

#include "format/internal_key.h"

namespace skv {
namespace {

class LevelIterator final : public InternalIterator {
 public:
  LevelIterator(std::shared_ptr<const void> pin, TableCache* cache, std::vector<FileMetaPtr> files,
                const TableReadOptions& options)
      : pin_(std::move(pin)), cache_(cache), files_(std::move(files)), options_(options) {}

  bool valid() const override { return status_.ok() && iter_ != nullptr && iter_->valid(); }

  void seek_first() override {
    if (!open(0)) return;
    iter_->seek_first();
    skip_forward();
  }

  void seek_last() override {
    if (files_.empty()) return reset();
    if (!open(files_.size() - 1)) return;
    iter_->seek_last();
    skip_backward();
  }

  void seek(std::string_view target) override {
    // The first file whose largest key is >= target.
    auto it = std::partition_point(files_.begin(), files_.end(), [&](const FileMetaPtr& f) {
      return compare_internal_keys(f->largest, target) < 0;
    });
    if (!open(static_cast<size_t>(it - files_.begin()))) return;
    iter_->seek(target);
    skip_forward();
  }

  void seek_for_prev(std::string_view target) override {
    // The last file whose smallest key is <= target.
    auto it = std::partition_point(files_.begin(), files_.end(), [&](const FileMetaPtr& f) {
      return compare_internal_keys(f->smallest, target) <= 0;
    });
    if (it == files_.begin()) return reset();
    if (!open(static_cast<size_t>(it - files_.begin()) - 1)) return;
    iter_->seek_for_prev(target);
    skip_backward();
  }

  void next() override {
    iter_->next();
    skip_forward();
  }

  void prev() override {
    iter_->prev();
    skip_backward();
  }

  std::string_view key() const override { return iter_->key(); }
  std::string_view value() const override { return iter_->value(); }

  Status status() const override {
    if (!status_.ok()) return status_;
    return iter_ != nullptr ? iter_->status() : Status::OK();
  }

 private:
  void reset() {
    iter_.reset();
    index_ = files_.size();
  }

  // Positions the child on file `i` (not yet seeked). False (and invalid) if `i` is past the end
  // or the table cannot be opened; the error then sits in status_.
  bool open(size_t i) {
    if (!status_.ok()) return false;
    if (i >= files_.size()) {
      reset();
      return false;
    }
    if (iter_ != nullptr && index_ == i) return true;
    iter_.reset();
    index_ = i;
    auto table = cache_->get(*files_[i]);
    if (!table.ok()) {
      status_ = table.status();
      return false;
    }
    iter_ = (*table)->new_iterator(options_);
    return true;
  }

  bool child_failed() {
    Status s = iter_->status();
    if (s.ok()) return false;
    status_ = std::move(s);
    return true;
  }

  void skip_forward() {
    while (iter_ != nullptr && !iter_->valid()) {
      if (child_failed()) return;
      if (!open(index_ + 1)) return;
      iter_->seek_first();
    }
  }

  void skip_backward() {
    while (iter_ != nullptr && !iter_->valid()) {
      if (child_failed()) return;
      if (index_ == 0) return reset();
      if (!open(index_ - 1)) return;
      iter_->seek_last();
    }
  }

  std::shared_ptr<const void> pin_;
  TableCache* const cache_;
  const std::vector<FileMetaPtr> files_;
  const TableReadOptions options_;
  size_t index_ = 0;
  std::unique_ptr<InternalIterator> iter_;  // over files_[index_] when non-null
  Status status_;                           // the first error, sticky
};

}  // namespace

std::unique_ptr<InternalIterator> new_level_iterator(std::shared_ptr<const void> pin,
                                                     TableCache* cache,
                                                     std::vector<FileMetaPtr> files,
                                                     const TableReadOptions& options) {
  return std::make_unique<LevelIterator>(std::move(pin), cache, std::move(files), options);
}

}  // namespace skv
