// KeyFilter: a blocked bloom filter over the user keys added to one memtable, so that a point
// read or a conflict check skips the skiplist walk (a cache miss per level) for a key the memtable
// cannot hold.
//
// The filter is an array of 64-byte lines. A key's hash (bloom_hash, sstable/bloom.h) picks one
// line and kProbes bits inside it, so a lookup touches one cache line whatever the probe count.
// A filter never forgets a key; its false positive rate grows with the keys added, which is why
// its size follows the memtable's (docs/memtable.md, "The key filter").
//
// Thread safety: add() may run concurrently with may_contain() and with other add() calls (bits
// are set with relaxed atomic ORs). A reader that can see an entry sees its bits: add() runs
// before the entry is inserted, and readers learn of entries through a sequence the writer
// publishes with release ordering after the insert.

#ifndef SKV_MEMTABLE_KEY_FILTER_H_
#define SKV_MEMTABLE_KEY_FILTER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace skv {

class KeyFilter {
 public:
  static constexpr size_t kLineBytes = 64;
  static constexpr int kProbes = 6;

  // A filter of `bytes` rounded up to whole lines; 0 makes a filter that holds nothing and
  // answers "may contain" to every key.
  explicit KeyFilter(size_t bytes);
  KeyFilter(const KeyFilter&) = delete;
  KeyFilter& operator=(const KeyFilter&) = delete;

  void add(std::string_view user_key);
  // False only if `user_key` was certainly never added.
  bool may_contain(std::string_view user_key) const;

  size_t memory_usage() const { return num_lines_ * kLineBytes; }

 private:
  struct alignas(kLineBytes) Line {
    std::atomic<uint64_t> words[kLineBytes / 8];
  };
  struct Probe {
    size_t line;
    uint64_t masks[kLineBytes / 8];
  };
  Probe probe(std::string_view user_key) const;

  size_t num_lines_ = 0;
  std::unique_ptr<Line[]> lines_;
};

}  // namespace skv

#endif  // SKV_MEMTABLE_KEY_FILTER_H_
