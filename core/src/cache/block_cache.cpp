#include "cache/block_cache.h"

#include <algorithm>
#include <condition_variable>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace skv {

namespace {

constexpr size_t kMaxShards = 16;
constexpr size_t kMinShardCapacity = 512 * 1024;

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

struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return static_cast<size_t>(mix(k.file_number * 0x9e3779b97f4a7c15ull ^ mix(k.offset)));
  }
};

class Shard {
 public:
  using Priority = BlockCache::Priority;

  void set_capacity(size_t c) {
    capacity_ = c;
    low_capacity_ = c / 4;
  }

  std::shared_ptr<const void> lookup(const CacheKey& key, Priority priority) {
    std::lock_guard<std::mutex> lock(mu_);
    return lookup_locked(key, priority);
  }

  void insert(const CacheKey& key, std::shared_ptr<const void> value, size_t charge,
              Priority priority) {
    // Drop the evicted values outside the lock: their destructors may be costly.
    std::vector<std::shared_ptr<const void>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    insert_locked(key, std::move(value), charge, priority, &dropped);
  }

  std::shared_ptr<const void> read_through(const CacheKey& key, Priority priority, bool keep,
                                           const BlockCache::Reader& read) {
    std::shared_ptr<Read> other, mine;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (std::shared_ptr<const void> hit = lookup_locked(key, priority)) return hit;
      auto it = reads_.find(key);
      if (it != reads_.end()) {
        other = it->second;
      } else {
        mine = std::make_shared<Read>();
        reads_.emplace(key, mine);
      }
    }
    if (other != nullptr) {
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
        }
        read->cv.notify_all();
      }
    } finish{this, key, mine, nullptr};
    size_t charge = 0;
    std::shared_ptr<const void> value = read(&charge);
    if (value != nullptr && keep) insert(key, value, std::max<size_t>(charge, 1), priority);
    finish.value = value;
    return value;
  }

  void erase_file(uint64_t file_number) {
    std::vector<std::shared_ptr<const void>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    for (std::list<Entry>* list : {&lru_, &low_}) {
      for (auto it = list->begin(); it != list->end();) {
        auto cur = it++;
        if (cur->key.file_number == file_number) {
          dropped.push_back(std::move(cur->value));
          remove(index_.find(cur->key));
        }
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
  struct Entry {
    CacheKey key;
    std::shared_ptr<const void> value;
    size_t charge;
    bool low;  // in low_ (the scan pool), else in lru_
  };
  using Index = std::unordered_map<CacheKey, std::list<Entry>::iterator, CacheKeyHash>;

  // A read in progress: callers that miss on its key wait for it.
  struct Read {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::shared_ptr<const void> value;  // null: the read failed
  };

  // REQUIRES: mu_ held.
  std::shared_ptr<const void> lookup_locked(const CacheKey& key, Priority priority) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    auto e = it->second;
    if (priority == Priority::High) {
      std::list<Entry>& from = e->low ? low_ : lru_;
      if (e->low) {
        e->low = false;
        low_usage_ -= e->charge;
      }
      lru_.splice(lru_.begin(), from, e);  // most recently used at the front
    }
    return e->value;
  }

  // REQUIRES: mu_ held.
  void insert_locked(const CacheKey& key, std::shared_ptr<const void> value, size_t charge,
                     Priority priority, std::vector<std::shared_ptr<const void>>* dropped) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      dropped->push_back(std::move(it->second->value));
      remove(it);
    }
    const bool low = priority == Priority::Low;
    if (charge > (low ? low_capacity_ : capacity_)) return;
    if (low) {
      // The scan pool keeps to its quarter by evicting its own oldest entries; below it, it
      // takes room from the least recently used High entries.
      while (low_usage_ + charge > low_capacity_) evict_oldest(low_, dropped);
      while (usage_ + charge > capacity_) evict_oldest(lru_.empty() ? low_ : lru_, dropped);
    } else {
      // A High insert takes room from the scan pool first.
      while (usage_ + charge > capacity_) evict_oldest(low_.empty() ? lru_ : low_, dropped);
    }
    std::list<Entry>& list = low ? low_ : lru_;
    list.push_front(Entry{key, std::move(value), charge, low});
    index_.emplace(key, list.begin());
    usage_ += charge;
    if (low) low_usage_ += charge;
  }

  // REQUIRES: mu_ held; `list` is not empty.
  void evict_oldest(std::list<Entry>& list, std::vector<std::shared_ptr<const void>>* dropped) {
    auto last = std::prev(list.end());
    dropped->push_back(std::move(last->value));
    remove(index_.find(last->key));
  }

  // REQUIRES: mu_ held; `it` is a valid index entry.
  void remove(Index::iterator it) {
    const Entry& e = *it->second;
    usage_ -= e.charge;
    if (e.low) low_usage_ -= e.charge;
    (e.low ? low_ : lru_).erase(it->second);
    index_.erase(it);
  }

  mutable std::mutex mu_;
  size_t capacity_ = 0;
  size_t low_capacity_ = 0;
  size_t usage_ = 0;
  size_t low_usage_ = 0;
  std::list<Entry> lru_;  // High entries, most recently used first
  std::list<Entry> low_;  // the scan pool, newest first
  Index index_;
  std::unordered_map<CacheKey, std::shared_ptr<Read>, CacheKeyHash> reads_;  // in progress
};

}  // namespace

struct BlockCache::Rep {
  size_t capacity = 0;
  std::vector<Shard> shards;

  Shard& shard_for(const CacheKey& key) { return shards[CacheKeyHash()(key) % shards.size()]; }
};

BlockCache::BlockCache(size_t capacity) : rep_(std::make_unique<Rep>()) {
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
  return rep_->shard_for(key).lookup(key, priority);
}

void BlockCache::insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
                        size_t charge, Priority priority) {
  const CacheKey key{file_number, offset};
  rep_->shard_for(key).insert(key, std::move(value), std::max<size_t>(charge, 1), priority);
}

std::shared_ptr<const void> BlockCache::read_through(uint64_t file_number, uint64_t offset,
                                                     Priority priority, bool keep,
                                                     const Reader& read) {
  const CacheKey key{file_number, offset};
  return rep_->shard_for(key).read_through(key, priority, keep, read);
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

}  // namespace skv
