#include "txn/buffer_iterator.h"

#include "iterator/db_iterator.h"
#include "iterator/internal_iterator.h"

namespace skv {
namespace {

class BufferIterator final : public UserIterator {
 public:
  BufferIterator(std::shared_ptr<const BufferStore> store, uint64_t view, std::string lower,
                 std::string upper)
      : store_(std::move(store)),
        view_(view),
        lower_(std::move(lower)),
        upper_(std::move(upper)),
        it_(&store_->list) {}

  bool valid() const override { return cur_ != nullptr; }

  void seek_first() override {
    if (lower_.empty()) {
      it_.seek_first();
    } else {
      it_.seek(probe_.make(lower_, BufferEntry::kNewest));
    }
    settle_forward();
  }

  void seek_last() override {
    if (upper_.empty()) {
      it_.seek_last();
    } else {
      it_.seek_for_prev(probe_.make(upper_, BufferEntry::kNewest));  // the last entry < upper
    }
    settle_backward();
  }

  void seek(std::string_view key) override {
    std::string_view target = key;
    if (!lower_.empty() && target < lower_) target = lower_;
    it_.seek(probe_.make(target, BufferEntry::kNewest));
    settle_forward();
  }

  void next() override {
    // Past every version of the current key: usually the next entry already is; otherwise seek
    // (seq 0 sorts after every version of the key).
    it_.next();
    if (it_.valid() && it_.key()->key() == cur_->key()) it_.seek(probe_.make(cur_->key(), 0));
    settle_forward();
  }

  void prev() override {
    it_.seek_for_prev(probe_.make(cur_->key(), BufferEntry::kNewest));
    settle_backward();
  }

  std::string_view key() const override { return cur_->key(); }
  std::string_view value() const override { return cur_->value(); }
  uint64_t timestamp() const override { return cur_->timestamp; }
  bool is_delete() const override { return cur_->is_delete; }
  Status status() const override { return Status::OK(); }

 private:
  // From the skiplist position onwards: the first key with a visible version, inside the range.
  // Versions of a key come newest first, so its first visible entry is the one the view sees.
  void settle_forward() {
    cur_ = nullptr;
    for (; it_.valid(); it_.next()) {
      const BufferEntry* e = it_.key();
      if (!upper_.empty() && e->key() >= upper_) return;
      if (e->visible_in(view_)) {
        cur_ = e;
        return;
      }
    }
  }

  // From the skiplist position backwards: the skiplist stands on some version of a key; take the
  // newest visible version of that key, or move on to the previous key if it has none.
  void settle_backward() {
    cur_ = nullptr;
    while (it_.valid()) {
      const BufferEntry* e = it_.key();
      if (!lower_.empty() && e->key() < lower_) return;
      const std::string_view key = e->key();  // arena bytes: stays valid as it_ moves
      if (const BufferEntry* found = find_visible(&it_, &probe_, key, view_)) {
        cur_ = found;
        return;
      }
      it_.seek_for_prev(probe_.make(key, BufferEntry::kNewest));
    }
  }

  const std::shared_ptr<const BufferStore> store_;
  const uint64_t view_;
  const std::string lower_, upper_;
  BufferStore::List::Iterator it_;
  BufferProbe probe_;
  const BufferEntry* cur_ = nullptr;
};

}  // namespace

std::unique_ptr<UserIterator> new_buffer_iterator(std::shared_ptr<const BufferStore> store,
                                                  uint64_t view, std::string lower,
                                                  std::string upper) {
  // Nothing buffered: an iterator over nothing, with nothing of its own.
  if (store == nullptr) return new_db_iterator(new_empty_iterator(), 0, {}, {}, false);
  return std::make_unique<BufferIterator>(std::move(store), view, std::move(lower),
                                          std::move(upper));
}

}  // namespace skv
