#include "txn/merged_iterator.h"

#include <string>

namespace skv {
namespace {

class OverlayIterator final : public UserIterator {
 public:
  OverlayIterator(std::unique_ptr<UserIterator> writes, std::unique_ptr<UserIterator> tree)
      : w_(std::move(writes)), t_(std::move(tree)) {}

  bool valid() const override { return cur_ != nullptr; }

  void seek_first() override {
    w_->seek_first();
    t_->seek_first();
    settle(true);
  }
  void seek_last() override {
    w_->seek_last();
    t_->seek_last();
    settle(false);
  }
  void seek(std::string_view key) override {
    w_->seek(key);
    t_->seek(key);
    settle(true);
  }

  void next() override {
    if (!forward_) {
      // Put both sources on the first entry after the current key.
      std::string k(cur_->key());
      position_after(w_.get(), k);
      position_after(t_.get(), k);
    } else {
      advance(true);
    }
    settle(true);
  }

  void prev() override {
    if (forward_) {
      std::string k(cur_->key());
      position_before(w_.get(), k);
      position_before(t_.get(), k);
    } else {
      advance(false);
    }
    settle(false);
  }

  std::string_view key() const override { return cur_->key(); }
  std::string_view value() const override {
    const std::string_view v = cur_->value();
    // The tree's iterator reads a value log here; a failed read stops it, and this one with it.
    if (!cur_->valid()) cur_ = nullptr;
    return v;
  }
  uint64_t timestamp() const override { return cur_ == w_.get() ? 0 : cur_->timestamp(); }
  Status status() const override {
    Status s = t_->status();
    if (!s.ok()) return s;
    return w_->status();
  }

 private:
  static void position_after(UserIterator* it, const std::string& k) {
    it->seek(k);
    if (it->valid() && it->key() == k) it->next();
  }
  static void position_before(UserIterator* it, const std::string& k) {
    it->seek(k);
    if (it->valid()) {
      it->prev();
    } else if (it->status().ok()) {
      it->seek_last();
    }
  }

  // Moves past the current entry; a tree entry shadowed by the current buffered one moves too.
  void advance(bool fwd) {
    if (cur_ == w_.get() && t_->valid() && t_->key() == w_->key()) step(t_.get(), fwd);
    step(cur_, fwd);
  }
  static void step(UserIterator* it, bool fwd) {
    if (fwd) {
      it->next();
    } else {
      it->prev();
    }
  }

  // Chooses the current entry in direction `fwd`, skipping buffered deletes (and what they hide).
  void settle(bool fwd) {
    forward_ = fwd;
    while (true) {
      cur_ = nullptr;
      if (!t_->valid() && !t_->status().ok()) return;  // error: stop, status() says why
      bool wv = w_->valid(), tv = t_->valid();
      if (!wv && !tv) return;
      if (wv && tv) {
        int c = w_->key().compare(t_->key());
        cur_ = (c == 0 || (c < 0) == fwd) ? w_.get() : t_.get();
      } else {
        cur_ = wv ? w_.get() : t_.get();
      }
      if (cur_ == w_.get() && w_->is_delete()) {
        advance(fwd);
        continue;
      }
      return;
    }
  }

  std::unique_ptr<UserIterator> w_;
  std::unique_ptr<UserIterator> t_;
  mutable UserIterator* cur_ = nullptr;  // null: invalid (value() may clear it on an error)
  bool forward_ = true;
};

}  // namespace

std::unique_ptr<UserIterator> new_overlay_iterator(std::unique_ptr<UserIterator> writes,
                                                   std::unique_ptr<UserIterator> tree) {
  return std::make_unique<OverlayIterator>(std::move(writes), std::move(tree));
}

}  // namespace skv
