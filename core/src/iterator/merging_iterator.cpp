// The merge keeps every child positioned and picks the smallest (forward) or largest (backward)
// current key with a min/max heap of child indices. On a direction switch, every child other than
// the current one is re-positioned around the current key, as the order then demands.
//
// A step is the merge's hot path (a count or a skip makes one per entry it passes), so it does
// little: the key of every child is kept (a child's key() view stays valid until that child
// moves), so comparisons make no virtual calls, and after the top child moves it is sifted down
// from the root: one or two comparisons a step while it stays the top.

#include "iterator/merging_iterator.h"

#include <string>

#include "format/internal_key.h"

namespace skv {
namespace {

class MergingIterator final : public InternalIterator {
 public:
  explicit MergingIterator(std::vector<std::unique_ptr<InternalIterator>> children)
      : children_(std::move(children)), keys_(children_.size()) {
    heap_.reserve(children_.size());
  }

  bool valid() const override { return current_ >= 0 && status_.ok(); }

  void seek_first() override {
    for (auto& c : children_) c->seek_first();
    rebuild(Direction::Forward);
  }
  void seek_last() override {
    for (auto& c : children_) c->seek_last();
    rebuild(Direction::Backward);
  }
  void seek(std::string_view target) override {
    for (auto& c : children_) c->seek(target);
    rebuild(Direction::Forward);
  }
  void seek_for_prev(std::string_view target) override {
    for (auto& c : children_) c->seek_for_prev(target);
    rebuild(Direction::Backward);
  }

  void next() override {
    if (direction_ != Direction::Forward) {
      // Every other child must move to the first entry after the current key.
      std::string k(key());
      for (size_t i = 0; i < children_.size(); ++i) {
        if (static_cast<int>(i) == current_) continue;
        auto& c = children_[i];
        c->seek(k);
        if (c->valid() && compare_internal_keys(c->key(), k) == 0) c->next();
      }
      children_[static_cast<size_t>(current_)]->next();
      rebuild(Direction::Forward);
      return;
    }
    children_[static_cast<size_t>(current_)]->next();
    fix_top();
  }

  void prev() override {
    if (direction_ != Direction::Backward) {
      std::string k(key());
      for (size_t i = 0; i < children_.size(); ++i) {
        if (static_cast<int>(i) == current_) continue;
        auto& c = children_[i];
        c->seek(k);
        if (c->valid()) {
          c->prev();  // first entry before k
        } else if (c->status().ok()) {
          c->seek_last();  // every entry is before k
        }
      }
      children_[static_cast<size_t>(current_)]->prev();
      rebuild(Direction::Backward);
      return;
    }
    children_[static_cast<size_t>(current_)]->prev();
    fix_top();
  }

  std::string_view key() const override { return keys_[static_cast<size_t>(current_)]; }
  std::string_view value() const override {
    return children_[static_cast<size_t>(current_)]->value();
  }
  Status status() const override {
    if (!status_.ok()) return status_;
    for (const auto& c : children_) {
      Status s = c->status();
      if (!s.ok()) return s;
    }
    return Status();
  }

 private:
  enum class Direction { Forward, Backward };

  // Heap order: the top is the smallest key going forward, the largest going backward.
  bool before(int a, int b) const {
    int r = compare_internal_keys(keys_[static_cast<size_t>(a)], keys_[static_cast<size_t>(b)]);
    if (r == 0) return a < b;  // stable: earlier children first
    return direction_ == Direction::Forward ? r < 0 : r > 0;
  }

  // Moves heap_[i] down until neither of its children comes before it.
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    const int x = heap_[i];
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(heap_[c + 1], heap_[c])) ++c;
      if (!before(heap_[c], x)) break;
      heap_[i] = heap_[c];
      i = c;
    }
    heap_[i] = x;
  }

  // Records the first error among children; an errored child stops the merge.
  bool check_errors() {
    for (const auto& c : children_) {
      if (!c->valid()) {
        Status s = c->status();
        if (!s.ok()) {
          status_ = std::move(s);
          current_ = -1;
          return false;
        }
      }
    }
    return true;
  }

  void rebuild(Direction d) {
    direction_ = d;
    status_ = Status();
    heap_.clear();
    current_ = -1;
    if (!check_errors()) return;
    for (size_t i = 0; i < children_.size(); ++i) {
      if (children_[i]->valid()) {
        keys_[i] = children_[i]->key();
        heap_.push_back(static_cast<int>(i));
      }
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
    current_ = heap_.empty() ? -1 : heap_.front();
  }

  // The top child moved in the current direction: restore the heap.
  void fix_top() {
    const auto top = static_cast<size_t>(heap_.front());
    InternalIterator& moved = *children_[top];
    if (moved.valid()) {
      keys_[top] = moved.key();
    } else {
      Status s = moved.status();
      if (!s.ok()) {
        status_ = std::move(s);
        current_ = -1;
        return;
      }
      heap_.front() = heap_.back();
      heap_.pop_back();
      if (heap_.empty()) {
        current_ = -1;
        return;
      }
    }
    sift_down(0);
    current_ = heap_.front();
  }

  std::vector<std::unique_ptr<InternalIterator>> children_;
  std::vector<std::string_view> keys_;  // keys_[i]: child i's key, while it is valid and in heap_
  std::vector<int> heap_;
  int current_ = -1;
  Direction direction_ = Direction::Forward;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> new_merging_iterator(
    std::vector<std::unique_ptr<InternalIterator>> children) {
  if (children.empty()) return new_empty_iterator();
  if (children.size() == 1) return std::move(children.front());
  return std::make_unique<MergingIterator>(std::move(children));
}

}  // namespace skv
