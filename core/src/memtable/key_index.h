// KeyIndex: a hash index from each user key of one memtable to its newest entry, so a point read
// or a conflict check finds a key's newest version with one or two cache misses instead of a
// skiplist walk, and learns that a key is absent without walking at all.
//
// Layout: open addressing with linear probing over 8-byte slots. A slot holds an entry pointer and
// a tag (the low bits of the key's hash) in one word, so a probe compares tags without touching
// the entry, and a slot is replaced in one atomic store. A key keeps its slot in a table: a newer
// version only swaps the pointer. The table doubles when it is 7/10 full. The keys move to the new
// table a few slots per put() rather than all at once (a whole rehash of 400,000 keys stalled the
// commit leader for 60 ms); until the move ends, a key not yet found in the new table is looked
// up in the old one, which is never written again. Outgrown tables stay allocated until the
// index is destroyed (a reader may still be probing one), so memory stays below twice the
// current table.
//
// Thread safety: put() calls must be serialized (the memtable's single writer). find() may run
// concurrently with put() and with other find() calls, without locks. put() runs after the entry
// is complete and linked, and stores the slot with release ordering; a reader learns of commits
// through a sequence the writer publishes after put(), so a reader that may see a version finds
// it (or a newer one) here.
//
// On a 64-bit machine a pointer must fit in 48 bits to share a word with a tag. One that does not
// (never seen on Linux x86-64 or arm64 user space, but not ruled out) turns the index off for
// good: find() then answers Unknown and the caller walks the skiplist, as without an index.

#ifndef SKV_MEMTABLE_KEY_INDEX_H_
#define SKV_MEMTABLE_KEY_INDEX_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "skv/platform.h"

namespace skv {

class KeyIndex {
 public:
  // Returns the user key of an entry given to put().
  using UserKeyOf = std::string_view (*)(const char* entry);
  // Whether entry `a` is a newer version than entry `b` of the same user key.
  using IsNewer = bool (*)(const char* a, const char* b);

  // `expected_keys`: the distinct keys the table is sized for before its first growth (at least
  // 64 are assumed). `blocks`: where tables of at least its preferred block size come from (the
  // memtable's arena source); smaller ones, and all of them when it is null, come from calloc.
  KeyIndex(size_t expected_keys, UserKeyOf user_key_of, IsNewer is_newer,
           std::shared_ptr<MemoryBlocks> blocks = nullptr);
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;
  ~KeyIndex();

  // Records `entry`, a version of `user_key` (== user_key_of(entry)), as its newest unless the
  // index holds a newer one. Writer only.
  void put(std::string_view user_key, const char* entry);

  enum class Lookup { Found, Absent, Unknown };
  // Found: *entry is the newest entry put() for `user_key`. Absent: put() never saw the key.
  // Unknown: the index is off (see above); ask the skiplist.
  Lookup find(std::string_view user_key, const char** entry) const;

  // Distinct keys put() so far.
  size_t keys() const { return keys_.load(std::memory_order_relaxed); }
  // Bytes of the current table and of the ones it outgrew.
  size_t memory_usage() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  struct Table {
    Table(size_t slots, MemoryBlocks* blocks);
    ~Table();
    Table(const Table&) = delete;
    Table& operator=(const Table&) = delete;
    const size_t mask;
    const int shift;  // 64 - log2(slots): a hash's home slot is its top bits
    // A table of whole preferred blocks of the platform's memory source (natively 2 MiB huge
    // pages: a probe then costs no TLB miss of its own, and evicts none of the skiplist's), zeroed
    // here; a smaller one from calloc.
    MemoryBlocks* const blocks;  // null for calloc
    std::atomic<uint64_t>* slots;
  };
  // Where a probe for a key stopped: its slot and word, or the empty slot ending the probe (word
  // 0).
  struct Probe {
    size_t slot;
    uint64_t word;
  };
  // Slots of the outgrown table moved to the new one per put() while a move is under way: a move
  // ends long before the new table is full (it needs 1.43 a put).
  static constexpr size_t kMigrateStep = 8;

  static uint64_t hash(std::string_view key);
  Probe probe(const Table* t, uint64_t h, std::string_view user_key, std::memory_order order) const;
  // Starts a move to a table twice the size. Writer only.
  void grow();
  // Moves up to `slots` slots of the outgrown table. Writer only. REQUIRES: prev_ != nullptr.
  void migrate(size_t slots);

  const UserKeyOf user_key_of_;
  const IsNewer is_newer_;
  const std::shared_ptr<MemoryBlocks> blocks_;  // outlives the tables (declared before them)
  std::atomic<Table*> cur_;
  // The outgrown table while its keys move to cur_ (a few slots each put(), so no put() pays for
  // a whole rehash); null otherwise. prev_ is the writer's copy.
  std::atomic<Table*> prev_shared_{nullptr};
  Table* prev_ = nullptr;
  size_t migrated_ = 0;                         // writer only: slots of prev_ moved so far
  std::vector<std::unique_ptr<Table>> tables_;  // the current one last; writer only
  std::atomic<size_t> keys_{0};
  std::atomic<size_t> bytes_{0};
  std::atomic<bool> off_{false};
};

}  // namespace skv

#endif  // SKV_MEMTABLE_KEY_INDEX_H_
