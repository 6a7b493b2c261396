// skv-test-modules: util sstable
// skv-test-wasm: off
#include <catch2/catch.hpp>

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cache/block_cache.h"

using namespace skv;

namespace {

std::shared_ptr<const void> value_of(uint64_t file, uint64_t offset) {
  return std::make_shared<const std::string>(std::to_string(file) + "@" + std::to_string(offset));
}

std::string text_of(const std::shared_ptr<const void>& v) {
  return *std::static_pointer_cast<const std::string>(v);
}

// A single-shard model of the cache: an LRU list of High entries (front = most recently used)
// and the scan pool of Low entries (front = newest), which holds at most a quarter of the
// capacity: a Low insert evicts the pool's oldest entries once it is full, else the least
// recently used High ones; a High insert evicts the pool's oldest entries first.
struct LruModel {
  using Priority = BlockCache::Priority;
  using Key = std::pair<uint64_t, uint64_t>;
  using List = std::list<std::pair<Key, size_t>>;
  size_t capacity = 0;
  size_t usage = 0;
  size_t low_usage = 0;
  List order;  // High
  List low;    // Low

  static List::iterator find(List& list, Key k) {
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->first == k) return it;
    }
    return list.end();
  }
  void pop_back(List& list) {
    usage -= list.back().second;
    if (&list == &low) low_usage -= list.back().second;
    list.pop_back();
  }
  void erase(uint64_t f, uint64_t o) {
    for (List* list : {&order, &low}) {
      auto it = find(*list, {f, o});
      if (it == list->end()) continue;
      usage -= it->second;
      if (list == &low) low_usage -= it->second;
      list->erase(it);
    }
  }
  bool lookup(uint64_t f, uint64_t o, Priority p = Priority::High) {
    auto it = find(order, {f, o});
    if (it != order.end()) {
      if (p == Priority::High) order.splice(order.begin(), order, it);
      return true;
    }
    it = find(low, {f, o});
    if (it == low.end()) return false;
    if (p == Priority::High) {
      low_usage -= it->second;
      order.splice(order.begin(), low, it);
    }
    return true;
  }
  void insert(uint64_t f, uint64_t o, size_t charge, Priority p = Priority::High) {
    charge = std::max<size_t>(charge, 1);
    erase(f, o);
    const size_t low_capacity = capacity / 4;
    if (charge > (p == Priority::Low ? low_capacity : capacity)) return;
    if (p == Priority::Low) {
      while (low_usage + charge > low_capacity) pop_back(low);
      while (usage + charge > capacity) pop_back(order.empty() ? low : order);
    } else {
      while (usage + charge > capacity) pop_back(low.empty() ? order : low);
    }
    (p == Priority::Low ? low : order).emplace_front(Key{f, o}, charge);
    usage += charge;
    if (p == Priority::Low) low_usage += charge;
  }
};

}  // namespace

TEST_CASE("small caches have one shard and follow LRU order exactly", "[block_cache]") {
  BlockCache cache(1000);
  REQUIRE(cache.num_shards() == 1);
  CHECK(cache.capacity() == 1000);

  cache.insert(1, 0, value_of(1, 0), 400);
  cache.insert(1, 100, value_of(1, 100), 400);
  CHECK(cache.usage() == 800);
  // Touch (1, 0) so that (1, 100) is the least recently used.
  REQUIRE(cache.lookup(1, 0) != nullptr);
  cache.insert(2, 0, value_of(2, 0), 300);
  CHECK(cache.usage() == 700);
  CHECK(cache.lookup(1, 100) == nullptr);
  REQUIRE(cache.lookup(1, 0) != nullptr);
  CHECK(text_of(cache.lookup(1, 0)) == "1@0");
  CHECK(text_of(cache.lookup(2, 0)) == "2@0");

  // Replacing an entry re-charges it.
  cache.insert(2, 0, value_of(2, 0), 100);
  CHECK(cache.usage() == 500);

  // An entry larger than the capacity is not cached and drops the old entry of its key.
  cache.insert(2, 0, value_of(2, 0), 1001);
  CHECK(cache.lookup(2, 0) == nullptr);
  CHECK(cache.usage() == 400);
}

TEST_CASE("the scan pool holds a quarter of the cache, goes first and is not promoted by sweeps",
          "[block_cache]") {
  using Priority = BlockCache::Priority;
  BlockCache cache(1000);
  REQUIRE(cache.num_shards() == 1);
  // Point reads fill the cache with High entries.
  for (uint64_t o = 0; o < 10; ++o) cache.insert(1, o, value_of(1, o), 100);
  CHECK(cache.usage() == 1000);
  // A sweep of 20 blocks takes at most a quarter of the cache (250 bytes: two blocks): the first
  // two evict the two least recently used High entries, later ones the sweep's own oldest.
  for (uint64_t o = 0; o < 20; ++o) cache.insert(2, o, value_of(2, o), 100, Priority::Low);
  CHECK(cache.usage() == 1000);
  CHECK(cache.low_usage() == 200);
  CHECK(cache.lookup(1, 0, Priority::Low) == nullptr);
  CHECK(cache.lookup(1, 1, Priority::Low) == nullptr);
  for (uint64_t o = 2; o < 10; ++o) CHECK(cache.lookup(1, o, Priority::Low) != nullptr);
  // The newest blocks of the sweep are there for a second sweep close behind the first.
  CHECK(cache.lookup(2, 18, Priority::Low) != nullptr);
  CHECK(cache.lookup(2, 19, Priority::Low) != nullptr);
  CHECK(cache.lookup(2, 17, Priority::Low) == nullptr);
  // A High insert evicts the oldest sweep block before any High entry, even after a Low hit.
  cache.insert(3, 0, value_of(3, 0), 100);
  CHECK(cache.lookup(2, 18, Priority::Low) == nullptr);
  CHECK(cache.lookup(2, 19, Priority::Low) != nullptr);
  CHECK(cache.low_usage() == 100);
  // A High lookup promotes a sweep block: it then counts as High and outlives the pool.
  REQUIRE(cache.lookup(2, 19) != nullptr);
  CHECK(cache.low_usage() == 0);
  cache.insert(4, 0, value_of(4, 0), 100, Priority::Low);
  CHECK(cache.lookup(2, 19, Priority::Low) != nullptr);
  // A block bigger than the pool is not cached Low, and drops an older entry of its key.
  cache.insert(2, 19, value_of(2, 19), 251, Priority::Low);
  CHECK(cache.lookup(2, 19) == nullptr);
  CHECK(cache.usage() == cache.low_usage() + 800);
  // erase_file reaches the pool too.
  cache.erase_file(4);
  CHECK(cache.low_usage() == 0);
}

TEST_CASE("cache usage matches an LRU model and never exceeds the capacity", "[block_cache]") {
  // Both priorities mixed, or High alone (a plain LRU cache).
  const bool mixed = GENERATE(false, true);
  const uint64_t seed = mixed ? 78 : 77;
  INFO("seed " << seed << " mixed " << mixed);
  std::mt19937_64 rng(seed);
  using Priority = BlockCache::Priority;
  auto priority = [&] { return mixed && rng() % 3 == 0 ? Priority::Low : Priority::High; };
  BlockCache cache(5000);
  REQUIRE(cache.num_shards() == 1);
  LruModel model;
  model.capacity = 5000;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t f = rng() % 4;
    const uint64_t o = (rng() % 50) * 4096;
    switch (rng() % 10) {
      case 0: {
        cache.erase_file(f);
        std::vector<std::pair<uint64_t, uint64_t>> gone;
        for (const LruModel::List* list : {&model.order, &model.low}) {
          for (const auto& e : *list) {
            if (e.first.first == f) gone.push_back(e.first);
          }
        }
        for (const auto& [gf, go] : gone) model.erase(gf, go);
        break;
      }
      case 1:
      case 2:
      case 3: {
        const Priority p = priority();
        const bool hit = model.lookup(f, o, p);
        auto v = cache.lookup(f, o, p);
        REQUIRE((v != nullptr) == hit);
        if (v) CHECK(text_of(v) == std::to_string(f) + "@" + std::to_string(o));
        break;
      }
      default: {
        const size_t charge = rng() % 10 == 0 ? rng() % 6000 : rng() % 800;
        const Priority p = priority();
        cache.insert(f, o, value_of(f, o), charge, p);
        model.insert(f, o, charge, p);
        break;
      }
    }
    REQUIRE(cache.usage() == model.usage);
    REQUIRE(cache.low_usage() == model.low_usage);
    REQUIRE(cache.usage() <= cache.capacity());
    REQUIRE(cache.low_usage() <= cache.capacity() / 4);
  }
}

TEST_CASE("capacity zero caches nothing", "[block_cache]") {
  BlockCache cache(0);
  cache.insert(1, 0, value_of(1, 0), 0);
  cache.insert(1, 1, value_of(1, 1), 10);
  CHECK(cache.lookup(1, 0) == nullptr);
  CHECK(cache.lookup(1, 1) == nullptr);
  CHECK(cache.usage() == 0);
}

TEST_CASE("evicted values stay alive while held", "[block_cache]") {
  BlockCache cache(100);
  cache.insert(1, 0, value_of(1, 0), 100);
  auto held = cache.lookup(1, 0);
  cache.insert(1, 1, value_of(1, 1), 100);  // evicts (1, 0)
  CHECK(cache.lookup(1, 0) == nullptr);
  REQUIRE(held != nullptr);
  CHECK(text_of(held) == "1@0");
  CHECK(cache.usage() == 100);
}

TEST_CASE("large caches are sharded and keep a hard total capacity", "[block_cache]") {
  const size_t capacity = 64 * 1024 * 1024 + 5;
  BlockCache cache(capacity);
  CHECK(cache.num_shards() == 16);
  CHECK(BlockCache(2 * 1024 * 1024).num_shards() == 4);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 5000; ++i) {
    cache.insert(rng() % 8, rng() % 100000, value_of(0, 0), 4096 + rng() % (256 * 1024));
    REQUIRE(cache.usage() <= capacity);
  }
  CHECK(cache.usage() > capacity / 2);
  // A block bigger than one shard's part is refused.
  cache.insert(99, 0, value_of(99, 0), capacity / 16 + 1);
  CHECK(cache.lookup(99, 0) == nullptr);
}

TEST_CASE("erase_file drops exactly one file's entries", "[block_cache]") {
  BlockCache cache(8 * 1024 * 1024);
  for (uint64_t f = 1; f <= 3; ++f) {
    for (uint64_t o = 0; o < 100; ++o) cache.insert(f, o * 4096, value_of(f, o * 4096), 1000);
  }
  CHECK(cache.usage() == 300 * 1000);
  cache.erase_file(2);
  CHECK(cache.usage() == 200 * 1000);
  for (uint64_t o = 0; o < 100; ++o) {
    CHECK(cache.lookup(2, o * 4096) == nullptr);
    CHECK(cache.lookup(1, o * 4096) != nullptr);
    CHECK(cache.lookup(3, o * 4096) != nullptr);
  }
}

TEST_CASE("read_through reads a missing block once, however many callers want it",
          "[block_cache]") {
  using Priority = BlockCache::Priority;
  const Priority priority = GENERATE(Priority::High, Priority::Low);
  INFO("low " << (priority == Priority::Low));
  BlockCache cache(8 * 1024 * 1024);
  std::atomic<int> reads{0};
  std::atomic<bool> release{false};
  // The first read waits until every caller has asked, so they all find it in progress (or,
  // arriving late, the cached block).
  BlockCache::Reader slow = [&](size_t* charge) -> std::shared_ptr<const void> {
    ++reads;
    while (!release.load()) std::this_thread::yield();
    *charge = 1000;
    return value_of(7, 4096);
  };
  std::vector<std::thread> threads;
  std::atomic<int> asked{0}, right{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      ++asked;
      auto v = cache.read_through(7, 4096, priority, true, slow);
      if (v != nullptr && text_of(v) == "7@4096") ++right;
    });
  }
  while (asked.load() < 8) std::this_thread::yield();
  release = true;
  for (auto& th : threads) th.join();
  CHECK(reads.load() == 1);
  CHECK(right.load() == 8);
  CHECK(cache.usage() == 1000);
  CHECK(cache.low_usage() == (priority == Priority::Low ? 1000u : 0u));
  // A hit runs no read.
  CHECK(text_of(cache.read_through(7, 4096, priority, true, slow)) == "7@4096");
  CHECK(reads.load() == 1);
}

TEST_CASE("read_through: a failed read caches nothing, and keep=false caches nothing",
          "[block_cache]") {
  using Priority = BlockCache::Priority;
  BlockCache cache(1 << 20);
  int reads = 0;
  BlockCache::Reader failing = [&](size_t*) -> std::shared_ptr<const void> {
    ++reads;
    return nullptr;
  };
  CHECK(cache.read_through(1, 0, Priority::High, true, failing) == nullptr);
  CHECK(cache.read_through(1, 0, Priority::High, true, failing) == nullptr);
  CHECK(reads == 2);  // nothing was remembered, so the second caller read again
  CHECK(cache.usage() == 0);

  BlockCache::Reader good = [&](size_t* charge) -> std::shared_ptr<const void> {
    ++reads;
    *charge = 10;
    return value_of(1, 0);
  };
  CHECK(text_of(cache.read_through(1, 0, Priority::Low, false, good)) == "1@0");
  CHECK(cache.usage() == 0);
  CHECK(cache.lookup(1, 0) == nullptr);
  CHECK(reads == 3);
  // ... but a block already cached is found whatever `keep` says.
  cache.insert(1, 0, value_of(1, 0), 10);
  CHECK(text_of(cache.read_through(1, 0, Priority::Low, false, good)) == "1@0");
  CHECK(reads == 3);
}

TEST_CASE("callers waiting on a read that fails read for themselves", "[block_cache]") {
  BlockCache cache(1 << 20);
  std::atomic<int> reads{0};
  std::atomic<bool> release{false};
  std::atomic<int> asked{0}, failed{0};
  // Every read fails; the first one waits until all callers have asked.
  BlockCache::Reader failing = [&](size_t*) -> std::shared_ptr<const void> {
    if (reads++ == 0) {
      while (!release.load()) std::this_thread::yield();
    }
    return nullptr;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      ++asked;
      if (cache.read_through(2, 0, BlockCache::Priority::High, true, failing) == nullptr) {
        ++failed;
      }
    });
  }
  while (asked.load() < 4) std::this_thread::yield();
  release = true;
  for (auto& th : threads) th.join();
  CHECK(failed.load() == 4);
  CHECK(reads.load() == 4);  // each caller got its own failure, none took the first one
  CHECK(cache.usage() == 0);
}

TEST_CASE("concurrent inserts, lookups and erases keep the cache consistent", "[block_cache]") {
  const size_t capacity = 4 * 1024 * 1024;
  BlockCache cache(capacity);
  REQUIRE(cache.num_shards() > 1);
  std::atomic<bool> bad_value{false};
  std::atomic<bool> over_capacity{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(500 + static_cast<uint64_t>(t));
      for (int i = 0; i < 20000; ++i) {
        const uint64_t f = rng() % 6;
        const uint64_t o = (rng() % 400) * 4096;
        const int op = static_cast<int>(rng() % 20);
        if (op == 0) {
          cache.erase_file(f);
        } else if (op < 10) {
          cache.insert(f, o, value_of(f, o), 1024 + rng() % 65536,
                       op < 4 ? BlockCache::Priority::Low : BlockCache::Priority::High);
        } else {
          auto v =
              cache.lookup(f, o, op < 13 ? BlockCache::Priority::Low : BlockCache::Priority::High);
          if (v && text_of(v) != std::to_string(f) + "@" + std::to_string(o)) bad_value = true;
        }
        if (cache.usage() > capacity) over_capacity = true;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK_FALSE(bad_value.load());
  CHECK_FALSE(over_capacity.load());
  CHECK(cache.usage() <= capacity);
  for (uint64_t f = 0; f < 6; ++f) cache.erase_file(f);
  CHECK(cache.usage() == 0);
}
