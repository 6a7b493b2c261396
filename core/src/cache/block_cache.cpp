#include "cache/block_cache.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace skv {

namespace {

constexpr size_t kMaxShards = 16;
constexpr size_t kMinShardCapacity = 512 * 1024;
// How often a reader waiting for another's read of the same block yields before it sleeps.
constexpr int kYieldsBeforeSleep = 64;

struct CacheKey {
  uint64_t file_number;
  uint64_t offset;
  bool operator==(const CacheKey& o) const {
    return file_number == o.file_number && offset == o.offset;
  }
};

inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

uint64_t key_hash(const CacheKey& k) {
  return mix(k.file_number * 0x9e3779b97f4a7c15ull ^ mix(k.offset));
}

struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const { return static_cast<size_t>(key_hash(k)); }
};

class Shard {
 public:
  using Priority = BlockCache::Priority;

  Shard() { buckets_.assign(kMinBuckets, nullptr); }
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;
  ~Shard() {
    for (List* list : {&lru_, &low_}) {
      while (list->head.next != &list->head) {
        Entry* e = list->head.next;
        unlink(e);
        delete e;
      }
    }
  }

  void set_capacity(size_t c) {
    capacity_ = c;
    low_capacity_ = c / 4;
  }

  std::shared_ptr<const void> lookup(const CacheKey& key, uint64_t hash, Priority priority) {
    std::lock_guard<std::mutex> lock(mu_);
    return lookup_locked(key, hash, priority);
  }

  void insert(const CacheKey& key, uint64_t hash, std::shared_ptr<const void> value, size_t charge,
              Priority priority) {
    // Drop the evicted values outside the lock: their destructors may be costly.
    std::vector<std::shared_ptr<const void>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    insert_locked(key, hash, std::move(value), charge, priority, &dropped);
  }

  std::shared_ptr<const void> read_through(const CacheKey& key, uint64_t hash, Priority priority,
                                           bool keep, const BlockCache::Reader& read) {
    std::shared_ptr<Read> other, mine;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (std::shared_ptr<const void> hit = lookup_locked(key, hash, priority)) return hit;
      auto it = reads_.find(key);
      if (it != reads_.end()) {
        other = it->second;
      } else {
        mine = std::make_shared<Read>();
        reads_.emplace(key, mine);
      }
    }
    if (other != nullptr) {
      // A block read takes tens of microseconds; a sleep and a wake-up can cost as much again.
      // Yield the processor a few times first, so a reader running elsewhere is not waited for
      // through the scheduler, then sleep.
      for (int i = 0; i < kYieldsBeforeSleep && !other->finished.load(std::memory_order_acquire);
           ++i) {
        std::this_thread::yield();
      }
      std::unique_lock<std::mutex> lock(other->mu);
      other->cv.wait(lock, [&] { return other->done; });
      if (other->value != nullptr) return other->value;
      // That read failed: this caller reads for itself, to get its own error.
      size_t charge = 0;
      return read(&charge);
    }
    // Whatever happens below, the waiters are released and the read is no longer in progress.
    struct Finish {
      Shard* shard;
      const CacheKey& key;
      const std::shared_ptr<Read>& read;
      std::shared_ptr<const void> value;
      ~Finish() {
        {
          std::lock_guard<std::mutex> lock(shard->mu_);
          shard->reads_.erase(key);
        }
        {
          std::lock_guard<std::mutex> lock(read->mu);
          read->done = true;
          read->value = value;
          read->finished.store(true, std::memory_order_release);
        }
        read->cv.notify_all();
      }
    } finish{this, key, mine, nullptr};
    size_t charge = 0;
    std::shared_ptr<const void> value = read(&charge);
    if (value != nullptr && keep) insert(key, hash, value, std::max<size_t>(charge, 1), priority);
    finish.value = value;
    return value;
  }

  void erase_file(uint64_t file_number) {
    std::vector<std::shared_ptr<const void>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    for (Entry*& first : buckets_) {
      for (Entry** link = &first; *link != nullptr;) {
        Entry* e = *link;
        if (e->key.file_number != file_number) {
          link = &e->chain;
          continue;
        }
        *link = e->chain;
        dropped.push_back(std::move(e->value));
        drop(e);
      }
    }
  }

  size_t usage() const {
    std::lock_guard<std::mutex> lock(mu_);
    return usage_;
  }

  size_t low_usage() const {
    std::lock_guard<std::mutex> lock(mu_);
    return low_usage_;
  }

 private:
  static constexpr size_t kMinBuckets = 64;

  // One allocation per entry: its place in the hash chain and in its list live with it.
  struct Entry {
    CacheKey key;
    uint64_t hash = 0;
    std::shared_ptr<const void> value;
    size_t charge = 0;
    bool low = false;        // in low_ (the scan pool), else in lru_
    Entry* chain = nullptr;  // the next entry of its bucket
    Entry* prev = nullptr;   // its list's neighbours (the list's head when at either end)
    Entry* next = nullptr;
  };
  // A circular list through a sentinel: head.next is the front (most recent), head.prev the back.
  struct List {
    Entry head;
    List() { head.prev = head.next = &head; }
  };

  // A read in progress: callers that miss on its key wait for it.
  struct Read {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::atomic<bool> finished{false};  // `done`, readable without the mutex
    std::shared_ptr<const void> value;  // null: the read failed
  };

  static void unlink(Entry* e) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
  }
  static void push_front(List& list, Entry* e) {
    e->prev = &list.head;
    e->next = list.head.next;
    e->next->prev = e;
    list.head.next = e;
  }

  Entry*& bucket(uint64_t hash) {
    return buckets_[static_cast<size_t>(hash >> 32) & (buckets_.size() - 1)];
  }

  // REQUIRES: mu_ held. The link that points at `key`'s entry (null at its end when absent).
  Entry** find(const CacheKey& key, uint64_t hash) {
    Entry** link = &bucket(hash);
    while (*link != nullptr && !((*link)->hash == hash && (*link)->key == key)) {
      link = &(*link)->chain;
    }
    return link;
  }

  // REQUIRES: mu_ held.
  std::shared_ptr<const void> lookup_locked(const CacheKey& key, uint64_t hash, Priority priority) {
    Entry* e = *find(key, hash);
    if (e == nullptr) return nullptr;
    if (priority == Priority::High && lru_.head.next != e) {
      if (e->low) {
        e->low = false;
        low_usage_ -= e->charge;
      }
      unlink(e);
      push_front(lru_, e);  // most recently used at the front
    }
    return e->value;
  }

  // REQUIRES: mu_ held.
  void insert_locked(const CacheKey& key, uint64_t hash, std::shared_ptr<const void> value,
                     size_t charge, Priority priority,
                     std::vector<std::shared_ptr<const void>>* dropped) {
    if (Entry** link = find(key, hash); *link != nullptr) {
      Entry* old = *link;
      *link = old->chain;
      dropped->push_back(std::move(old->value));
      drop(old);
    }
    const bool low = priority == Priority::Low;
    if (charge > (low ? low_capacity_ : capacity_)) return;
    if (low) {
      // The scan pool keeps to its quarter by evicting its own oldest entries; below it, it
      // takes room from the least recently used High entries.
      while (low_usage_ + charge > low_capacity_) evict_oldest(low_, dropped);
      while (usage_ + charge > capacity_) evict_oldest(lru_empty() ? low_ : lru_, dropped);
    } else {
      // A High insert takes room from the scan pool first.
      while (usage_ + charge > capacity_) evict_oldest(low_empty() ? lru_ : low_, dropped);
    }
    auto* e = new Entry;
    e->key = key;
    e->hash = hash;
    e->value = std::move(value);
    e->charge = charge;
    e->low = low;
    push_front(low ? low_ : lru_, e);
    Entry*& first = bucket(hash);
    e->chain = first;
    first = e;
    usage_ += charge;
    if (low) low_usage_ += charge;
    if (++count_ > buckets_.size()) grow();
  }

  bool lru_empty() const { return lru_.head.next == &lru_.head; }
  bool low_empty() const { return low_.head.next == &low_.head; }

  // REQUIRES: mu_ held; `list` is not empty.
  void evict_oldest(List& list, std::vector<std::shared_ptr<const void>>* dropped) {
    Entry* e = list.head.prev;
    Entry** link = find(e->key, e->hash);
    *link = e->chain;
    dropped->push_back(std::move(e->value));
    drop(e);
  }

  // REQUIRES: mu_ held; `e` is already out of its hash chain.
  void drop(Entry* e) {
    usage_ -= e->charge;
    if (e->low) low_usage_ -= e->charge;
    unlink(e);
    --count_;
    delete e;
  }

  // Doubles the buckets (one entry per bucket on average at most). REQUIRES: mu_ held.
  void grow() {
    std::vector<Entry*> old(buckets_.size() * 2, nullptr);
    old.swap(buckets_);
    for (Entry* first : old) {
      while (first != nullptr) {
        Entry* e = first;
        first = e->chain;
        Entry*& b = bucket(e->hash);
        e->chain = b;
        b = e;
      }
    }
  }

  mutable std::mutex mu_;
  size_t capacity_ = 0;
  size_t low_capacity_ = 0;
  size_t usage_ = 0;
  size_t low_usage_ = 0;
  size_t count_ = 0;
  List lru_;  // High entries, most recently used first
  List low_;  // the scan pool, newest first
  std::vector<Entry*> buckets_;
  std::unordered_map<CacheKey, std::shared_ptr<Read>, CacheKeyHash> reads_;  // in progress
};

}  // namespace

struct BlockCache::Rep {
  BlockBufferPool::Handle buffers;  // declared first: dropped after the shards' entries
  size_t capacity = 0;
  std::vector<Shard> shards;

  // Shards take the hash's low bits, buckets within a shard higher ones.
  Shard& shard_for(uint64_t hash) { return shards[static_cast<size_t>(hash % shards.size())]; }
};

BlockCache::BlockCache(size_t capacity, BlockBufferPool::Handle buffers)
    : rep_(std::make_unique<Rep>()) {
  rep_->buffers = std::move(buffers);
  rep_->capacity = capacity;
  size_t n = 1;
  while (n < kMaxShards && capacity / (n * 2) >= kMinShardCapacity) n *= 2;
  rep_->shards = std::vector<Shard>(n);
  for (size_t i = 0; i < n; ++i) {
    // Spread the remainder so the parts add up to exactly `capacity`.
    rep_->shards[i].set_capacity(capacity / n + (i < capacity % n ? 1 : 0));
  }
}

BlockCache::~BlockCache() = default;

std::shared_ptr<const void> BlockCache::lookup(uint64_t file_number, uint64_t offset,
                                               Priority priority) {
  const CacheKey key{file_number, offset};
  const uint64_t hash = key_hash(key);
  return rep_->shard_for(hash).lookup(key, hash, priority);
}

void BlockCache::insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
                        size_t charge, Priority priority) {
  const CacheKey key{file_number, offset};
  const uint64_t hash = key_hash(key);
  rep_->shard_for(hash).insert(key, hash, std::move(value), std::max<size_t>(charge, 1), priority);
}

std::shared_ptr<const void> BlockCache::read_through(uint64_t file_number, uint64_t offset,
                                                     Priority priority, bool keep,
                                                     const Reader& read) {
  const CacheKey key{file_number, offset};
  const uint64_t hash = key_hash(key);
  return rep_->shard_for(hash).read_through(key, hash, priority, keep, read);
}

void BlockCache::erase_file(uint64_t file_number) {
  for (Shard& s : rep_->shards) s.erase_file(file_number);
}

size_t BlockCache::usage() const {
  size_t total = 0;
  for (const Shard& s : rep_->shards) total += s.usage();
  return total;
}

size_t BlockCache::low_usage() const {
  size_t total = 0;
  for (const Shard& s : rep_->shards) total += s.low_usage();
  return total;
}

size_t BlockCache::capacity() const { return rep_->capacity; }

size_t BlockCache::num_shards() const { return rep_->shards.size(); }

BlockBufferPool* BlockCache::buffers() const { return rep_->buffers.get(); }

}  // namespace skv
