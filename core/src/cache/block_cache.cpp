#include "cache/block_cache.h"

#include <algorithm>
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
  void set_capacity(size_t c) { capacity_ = c; }

  std::shared_ptr<const void> lookup(const CacheKey& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used at the front
    return it->second->value;
  }

  void insert(const CacheKey& key, std::shared_ptr<const void> value, size_t charge) {
    // Drop the evicted values outside the lock: their destructors may be costly.
    std::vector<std::shared_ptr<const void>> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        dropped.push_back(std::move(it->second->value));
        remove(it);
      }
      if (charge > capacity_) return;
      while (usage_ + charge > capacity_) {
        auto last = std::prev(lru_.end());
        dropped.push_back(std::move(last->value));
        remove(index_.find(last->key));
      }
      lru_.push_front(Entry{key, std::move(value), charge});
      index_.emplace(key, lru_.begin());
      usage_ += charge;
    }
  }

  void erase_file(uint64_t file_number) {
    std::vector<std::shared_ptr<const void>> dropped;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = lru_.begin(); it != lru_.end();) {
      auto cur = it++;
      if (cur->key.file_number == file_number) {
        dropped.push_back(std::move(cur->value));
        remove(index_.find(cur->key));
      }
    }
  }

  size_t usage() const {
    std::lock_guard<std::mutex> lock(mu_);
    return usage_;
  }

 private:
  struct Entry {
    CacheKey key;
    std::shared_ptr<const void> value;
    size_t charge;
  };
  using Index = std::unordered_map<CacheKey, std::list<Entry>::iterator, CacheKeyHash>;

  // REQUIRES: mu_ held; `it` is a valid index entry.
  void remove(Index::iterator it) {
    usage_ -= it->second->charge;
    lru_.erase(it->second);
    index_.erase(it);
  }

  mutable std::mutex mu_;
  size_t capacity_ = 0;
  size_t usage_ = 0;
  std::list<Entry> lru_;
  Index index_;
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

std::shared_ptr<const void> BlockCache::lookup(uint64_t file_number, uint64_t offset) {
  const CacheKey key{file_number, offset};
  return rep_->shard_for(key).lookup(key);
}

void BlockCache::insert(uint64_t file_number, uint64_t offset, std::shared_ptr<const void> value,
                        size_t charge) {
  const CacheKey key{file_number, offset};
  rep_->shard_for(key).insert(key, std::move(value), std::max<size_t>(charge, 1));
}

void BlockCache::erase_file(uint64_t file_number) {
  for (Shard& s : rep_->shards) s.erase_file(file_number);
}

size_t BlockCache::usage() const {
  size_t total = 0;
  for (const Shard& s : rep_->shards) total += s.usage();
  return total;
}

size_t BlockCache::capacity() const { return rep_->capacity; }

size_t BlockCache::num_shards() const { return rep_->shards.size(); }

}  // namespace skv
