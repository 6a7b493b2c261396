#include "memtable/key_index.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "sstable/bloom.h"

namespace skv {

namespace {

// A slot: 0 when empty, else an entry pointer in the low kPointerBits and the tag (the low bits
// of the key's hash) above them.
constexpr int kPointerBits = sizeof(uintptr_t) >= 8 ? 48 : 32;
constexpr uint64_t kPointerMask = (uint64_t{1} << kPointerBits) - 1;

uint64_t tag_of(uint64_t h) { return h & (~uint64_t{0} >> kPointerBits); }
uint64_t make_word(uint64_t h, const char* entry) {
  return (tag_of(h) << kPointerBits) | static_cast<uint64_t>(reinterpret_cast<uintptr_t>(entry));
}
bool tag_matches(uint64_t word, uint64_t h) { return (word >> kPointerBits) == tag_of(h); }
const char* entry_of(uint64_t word) {
  return reinterpret_cast<const char*>(static_cast<uintptr_t>(word & kPointerMask));
}

// Grows at 7/10 full: linear probing stays short (a miss reads about 6 slots at worst on
// average, most of them in one cache line).
bool over_load(size_t keys, size_t slots) { return keys * 10 > slots * 7; }

size_t slots_for(size_t keys) {
  size_t slots = 128;
  while (over_load(keys, slots)) slots *= 2;
  return slots;
}

}  // namespace

static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) &&
              std::atomic<uint64_t>::is_always_lock_free);

namespace {

// Whether a table of `bytes` comes from `blocks`: whole preferred blocks only.
bool from_blocks(const MemoryBlocks* blocks, size_t bytes) {
  if (blocks == nullptr) return false;
  const size_t preferred = blocks->preferred_block_size();
  return preferred > 0 && bytes >= preferred && bytes % preferred == 0;
}

}  // namespace

KeyIndex::Table::Table(size_t n, MemoryBlocks* source)
    : mask(n - 1),
      shift(64 - std::countr_zero(n)),
      blocks(from_blocks(source, n * sizeof(uint64_t)) ? source : nullptr),
      slots(nullptr) {
  assert(std::has_single_bit(n));
  const size_t bytes = n * sizeof(uint64_t);
  if (blocks != nullptr) {
    char* mem = blocks->allocate(bytes);  // throws bad_alloc, as calloc's failure below
    std::memset(mem, 0, bytes);
    slots = reinterpret_cast<std::atomic<uint64_t>*>(mem);
  } else {
    slots = static_cast<std::atomic<uint64_t>*>(std::calloc(n, sizeof(uint64_t)));
    if (slots == nullptr) throw std::bad_alloc();
  }
}

KeyIndex::Table::~Table() {
  if (blocks != nullptr) {
    blocks->release(reinterpret_cast<char*>(slots), (mask + 1) * sizeof(uint64_t));
  } else {
    std::free(slots);
  }
}

KeyIndex::KeyIndex(size_t expected_keys, UserKeyOf user_key_of, IsNewer is_newer,
                   std::shared_ptr<MemoryBlocks> blocks)
    : user_key_of_(user_key_of), is_newer_(is_newer), blocks_(std::move(blocks)) {
  tables_.push_back(
      std::make_unique<Table>(slots_for(std::max<size_t>(expected_keys, 64)), blocks_.get()));
  cur_.store(tables_.back().get(), std::memory_order_release);
  bytes_.store((tables_.back()->mask + 1) * sizeof(uint64_t), std::memory_order_relaxed);
}

KeyIndex::~KeyIndex() = default;

uint64_t KeyIndex::hash(std::string_view key) { return bloom_hash(key); }

KeyIndex::Probe KeyIndex::probe(const Table* t, uint64_t h, std::string_view user_key,
                                std::memory_order order) const {
  for (size_t i = static_cast<size_t>(h >> t->shift);; i = (i + 1) & t->mask) {
    const uint64_t w = t->slots[i].load(order);
    if (w == 0) return Probe{i, 0};
    if (tag_matches(w, h) && user_key_of_(entry_of(w)) == user_key) return Probe{i, w};
  }
}

void KeyIndex::grow() {
  while (prev_ != nullptr) migrate(SIZE_MAX);  // the last growth's move, finished first
  Table* old = tables_.back().get();
  tables_.push_back(std::make_unique<Table>((old->mask + 1) * 2, blocks_.get()));
  bytes_.fetch_add((tables_.back()->mask + 1) * sizeof(uint64_t), std::memory_order_relaxed);
  // prev_ before cur_: a reader that sees the new table also sees the old one to probe.
  prev_ = old;
  prev_shared_.store(old, std::memory_order_release);
  cur_.store(tables_.back().get(), std::memory_order_release);
  migrated_ = 0;
}

void KeyIndex::migrate(size_t slots) {
  Table* cur = tables_.back().get();
  const size_t n = prev_->mask + 1;
  const size_t end = slots >= n - migrated_ ? n : migrated_ + slots;
  for (; migrated_ < end; ++migrated_) {
    const uint64_t w = prev_->slots[migrated_].load(std::memory_order_relaxed);
    if (w == 0) continue;
    const std::string_view key = user_key_of_(entry_of(w));
    const uint64_t h = hash(key);
    // A key given a newer version since the growth is in the new table already.
    const Probe p = probe(cur, h, key, std::memory_order_relaxed);
    if (p.word == 0) cur->slots[p.slot].store(w, std::memory_order_release);
  }
  if (migrated_ == n) {
    // Every key of the old table is in the new one (release: a reader that sees no old table
    // sees them all).
    prev_ = nullptr;
    prev_shared_.store(nullptr, std::memory_order_release);
  }
}

void KeyIndex::put(std::string_view user_key, const char* entry) {
  if (off_.load(std::memory_order_relaxed)) return;
  if ((static_cast<uint64_t>(reinterpret_cast<uintptr_t>(entry)) & ~kPointerMask) != 0) {
    off_.store(true, std::memory_order_release);
    return;
  }
  const uint64_t h = hash(user_key);
  const uint64_t word = make_word(h, entry);
  Table* cur = tables_.back().get();
  Probe p = probe(cur, h, user_key, std::memory_order_relaxed);
  if (p.word != 0) {
    if (is_newer_(entry, entry_of(p.word)))
      cur->slots[p.slot].store(word, std::memory_order_release);
    return;
  }
  if (prev_ != nullptr) {
    const Probe old = probe(prev_, h, user_key, std::memory_order_relaxed);
    if (old.word != 0) {
      // Not moved yet: the newer of the two versions goes to the new table (the old table is
      // never written after its growth, and a reader probes it only after the new one).
      cur->slots[p.slot].store(is_newer_(entry, entry_of(old.word)) ? word : old.word,
                               std::memory_order_release);
      migrate(kMigrateStep);
      return;
    }
  }
  const size_t keys = keys_.load(std::memory_order_relaxed) + 1;
  if (over_load(keys, cur->mask + 1)) {
    grow();
    cur = tables_.back().get();
    p = probe(cur, h, user_key, std::memory_order_relaxed);  // absent there: an empty slot
  }
  cur->slots[p.slot].store(word, std::memory_order_release);
  keys_.store(keys, std::memory_order_relaxed);
  if (prev_ != nullptr) migrate(kMigrateStep);
}

KeyIndex::Lookup KeyIndex::find(std::string_view user_key, const char** entry) const {
  // cur_ before prev_ (see grow()), and prev_ before probing cur_: if the move finishes while
  // this probes, the old table is still probed (it is never freed or written after its growth).
  const Table* cur = cur_.load(std::memory_order_acquire);
  const Table* prev = prev_shared_.load(std::memory_order_acquire);
  // put() turns the index off before the entry it could not index is published.
  if (off_.load(std::memory_order_acquire)) return Lookup::Unknown;
  const uint64_t h = hash(user_key);
  Probe p = probe(cur, h, user_key, std::memory_order_acquire);
  if (p.word == 0 && prev != nullptr && prev != cur) {
    p = probe(prev, h, user_key, std::memory_order_acquire);
  }
  if (p.word == 0) return Lookup::Absent;
  *entry = entry_of(p.word);
  return Lookup::Found;
}

}  // namespace skv
