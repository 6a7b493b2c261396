// SkipList: a sorted set of keys for one writer and any number of concurrent lock-free readers.
// Nodes live in an Arena and are never removed; the list only grows until it is destroyed.
//
// Thread safety: insert() calls must be serialized by the caller. Readers (contains() and
// Iterator) need no lock and may run concurrently with an insert(): every link is published
// with a release store after the node is fully built, and followed with an acquire load, so a
// reader sees each node either not at all or complete. The list (and its arena) must outlive
// every reader.
//
// Key must be trivially copyable and destructible (the arena never runs destructors), typically a
// pointer into the arena. Comparator is `int operator()(const Key& a, const Key& b) const`
// returning <0, 0 or >0.
//
// The height of each node is drawn from a per-list pseudo-random generator with a fixed seed, so a
// given sequence of inserts always builds the same list.

#ifndef SKV_MEMTABLE_SKIPLIST_H_
#define SKV_MEMTABLE_SKIPLIST_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "memtable/arena.h"

namespace skv {

template <typename Key, typename Comparator>
class SkipList {
 private:
  struct Node;

 public:
  static constexpr int kMaxHeight = 12;
  static constexpr uint32_t kBranching = 4;  // a node reaches level i+1 with probability 1/4
  static constexpr uint64_t kDefaultSeed = 0x2545f4914f6cdd1dull;

  // `arena` must outlive the list. `seed` fixes the shape of the list.
  SkipList(Comparator cmp, Arena* arena, uint64_t seed = kDefaultSeed);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // Adds `key`. REQUIRES: no key comparing equal is in the list; writers serialized.
  void insert(const Key& key);

  // Adds a key that lives in the node's own allocation: `room` bytes right after the node's links
  // are handed to `fill(char* room)`, which writes the key's bytes there and returns the Key
  // (typically a pointer to them). A search then reads a node's links and its key bytes from
  // neighbouring memory instead of two distant places. Same requirements as insert().
  template <typename Fill>
  void insert_with_room(size_t room, Fill&& fill);

  // Whether a key comparing equal to `key` is in the list.
  bool contains(const Key& key) const;

  // A cursor over the list. Valid positions stay valid while keys are inserted around them.
  // One iterator is used by one thread at a time.
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list) {}

    bool valid() const { return node_ != nullptr; }
    // REQUIRES: valid().
    const Key& key() const {
      assert(valid());
      return node_->key;
    }
    // REQUIRES: valid().
    void next() {
      assert(valid());
      node_ = node_->next(0);
    }
    // REQUIRES: valid(). Costs a search from the top (there are no back links).
    void prev() {
      assert(valid());
      node_ = list_->find_less_than(node_->key);
      if (node_ == list_->head_) node_ = nullptr;
    }
    // Positions at the first key >= target.
    void seek(const Key& target) { node_ = list_->find_greater_or_equal(target, nullptr); }
    // Positions at the last key <= target.
    void seek_for_prev(const Key& target) {
      node_ = list_->find_less_or_equal(target);
      if (node_ == list_->head_) node_ = nullptr;
    }
    void seek_first() { node_ = list_->head_->next(0); }
    void seek_last() {
      node_ = list_->find_last();
      if (node_ == list_->head_) node_ = nullptr;
    }

   private:
    const SkipList* list_;
    Node* node_ = nullptr;
  };

 private:
  static_assert(std::is_trivially_copyable_v<Key> && std::is_trivially_destructible_v<Key>);

  // A node is this struct followed by `height` links, all in one arena allocation.
  struct Node {
    explicit Node(const Key& k) : key(k) {}
    const Key key;

    static constexpr size_t links_offset() {
      constexpr size_t a = alignof(std::atomic<Node*>);
      return (sizeof(Node) + a - 1) / a * a;
    }
    std::atomic<Node*>* links() {
      return std::launder(
          reinterpret_cast<std::atomic<Node*>*>(reinterpret_cast<char*>(this) + links_offset()));
    }
    Node* next(int level) { return links()[level].load(std::memory_order_acquire); }
    void set_next(int level, Node* n) { links()[level].store(n, std::memory_order_release); }
    // For the writer, before the node is published.
    Node* next_relaxed(int level) { return links()[level].load(std::memory_order_relaxed); }
    void set_next_relaxed(int level, Node* n) {
      links()[level].store(n, std::memory_order_relaxed);
    }
  };

  static size_t node_bytes(int height) {
    return Node::links_offset() + sizeof(std::atomic<Node*>) * height;
  }
  // Builds a node with null links in `mem` (node_bytes(height) bytes from the arena).
  static Node* construct_node(char* mem, const Key& key, int height);
  Node* new_node(const Key& key, int height);
  // Links the unpublished node `n` of `height` into the list.
  void link(Node* n, int height);
  int random_height();
  int max_height() const { return max_height_.load(std::memory_order_relaxed); }
  bool less(const Key& a, const Key& b) const { return compare_(a, b) < 0; }

  // The first node >= key (nullptr if none). If prev is not null, fills prev[level] with the last
  // node < key at every level below max_height().
  Node* find_greater_or_equal(const Key& key, Node** prev) const;
  // The last node < key, or head_.
  Node* find_less_than(const Key& key) const;
  // The last node <= key, or head_.
  Node* find_less_or_equal(const Key& key) const;
  // The last node, or head_.
  Node* find_last() const;

  const Comparator compare_;
  Arena* const arena_;
  Node* const head_;
  std::atomic<int> max_height_{1};  // only grows; read relaxed (head links start out null)
  uint64_t rng_;                    // writer only
};

template <typename Key, typename Comparator>
SkipList<Key, Comparator>::SkipList(Comparator cmp, Arena* arena, uint64_t seed)
    : compare_(cmp),
      arena_(arena),
      head_(new_node(Key{}, kMaxHeight)),
      rng_(seed == 0 ? kDefaultSeed : seed) {}

template <typename Key, typename Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::new_node(const Key& key,
                                                                              int height) {
  return construct_node(arena_->allocate_aligned(node_bytes(height)), key, height);
}

template <typename Key, typename Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::construct_node(char* mem,
                                                                                    const Key& key,
                                                                                    int height) {
  static_assert(alignof(Node) <= Arena::kAlignment);
  static_assert(alignof(std::atomic<Node*>) <= Arena::kAlignment);
  Node* n = new (mem) Node(key);
  for (int i = 0; i < height; ++i)
    new (mem + Node::links_offset() + sizeof(std::atomic<Node*>) * i) std::atomic<Node*>(nullptr);
  return n;
}

template <typename Key, typename Comparator>
int SkipList<Key, Comparator>::random_height() {
  int height = 1;
  while (height < kMaxHeight) {
    // xorshift64*
    rng_ ^= rng_ >> 12;
    rng_ ^= rng_ << 25;
    rng_ ^= rng_ >> 27;
    const uint64_t r = (rng_ * 0x2545f4914f6cdd1dull) >> 32;
    if (r % kBranching != 0) break;
    ++height;
  }
  return height;
}

template <typename Key, typename Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::find_greater_or_equal(
    const Key& key, Node** prev) const {
  Node* x = head_;
  int level = max_height() - 1;
  while (true) {
    Node* next = x->next(level);
    if (next != nullptr && less(next->key, key)) {
      x = next;
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      --level;
    }
  }
}

template <typename Key, typename Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::find_less_than(
    const Key& key) const {
  Node* x = head_;
  int level = max_height() - 1;
  while (true) {
    Node* next = x->next(level);
    if (next != nullptr && less(next->key, key)) {
      x = next;
    } else {
      if (level == 0) return x;
      --level;
    }
  }
}

template <typename Key, typename Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::find_less_or_equal(
    const Key& key) const {
  Node* x = head_;
  int level = max_height() - 1;
  while (true) {
    Node* next = x->next(level);
    if (next != nullptr && compare_(next->key, key) <= 0) {
      x = next;
    } else {
      if (level == 0) return x;
      --level;
    }
  }
}

template <typename Key, typename Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::find_last() const {
  Node* x = head_;
  int level = max_height() - 1;
  while (true) {
    Node* next = x->next(level);
    if (next != nullptr) {
      x = next;
    } else {
      if (level == 0) return x;
      --level;
    }
  }
}

template <typename Key, typename Comparator>
void SkipList<Key, Comparator>::insert(const Key& key) {
  const int height = random_height();
  link(new_node(key, height), height);
}

template <typename Key, typename Comparator>
template <typename Fill>
void SkipList<Key, Comparator>::insert_with_room(size_t room, Fill&& fill) {
  const int height = random_height();
  char* mem = arena_->allocate_aligned(node_bytes(height) + room);
  const Key key = fill(mem + node_bytes(height));
  link(construct_node(mem, key, height), height);
}

template <typename Key, typename Comparator>
void SkipList<Key, Comparator>::link(Node* n, int height) {
  Node* prev[kMaxHeight];
  Node* x = find_greater_or_equal(n->key, prev);
  assert(x == nullptr || compare_(n->key, x->key) != 0);
  (void)x;
  if (height > max_height()) {
    for (int i = max_height(); i < height; ++i) prev[i] = head_;
    // Readers that see the new height before the node find null links at the new levels of
    // head_ and simply move down.
    max_height_.store(height, std::memory_order_relaxed);
  }
  for (int i = 0; i < height; ++i) {
    n->set_next_relaxed(i, prev[i]->next_relaxed(i));  // n is not visible yet
    prev[i]->set_next(i, n);                           // publishes n at level i
  }
}

template <typename Key, typename Comparator>
bool SkipList<Key, Comparator>::contains(const Key& key) const {
  Node* x = find_greater_or_equal(key, nullptr);
  return x != nullptr && compare_(key, x->key) == 0;
}

}  // namespace skv

#endif  // SKV_MEMTABLE_SKIPLIST_H_
