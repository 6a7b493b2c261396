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

// A single-shard LRU model: front = most recently used.
struct LruModel {
  size_t capacity = 0;
  size_t usage = 0;
  std::list<std::pair<std::pair<uint64_t, uint64_t>, size_t>> order;

  auto find(uint64_t f, uint64_t o) {
    for (auto it = order.begin(); it != order.end(); ++it) {
      if (it->first == std::make_pair(f, o)) return it;
    }
    return order.end();
  }
  bool lookup(uint64_t f, uint64_t o) {
    auto it = find(f, o);
    if (it == order.end()) return false;
    order.splice(order.begin(), order, it);
    return true;
  }
  void insert(uint64_t f, uint64_t o, size_t charge) {
    charge = std::max<size_t>(charge, 1);
    auto it = find(f, o);
    if (it != order.end()) {
      usage -= it->second;
      order.erase(it);
    }
    if (charge > capacity) return;
    while (usage + charge > capacity) {
      usage -= order.back().second;
      order.pop_back();
    }
    order.emplace_front(std::make_pair(f, o), charge);
    usage += charge;
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

TEST_CASE("cache usage matches an LRU model and never exceeds the capacity", "[block_cache]") {
  const uint64_t seed = 77;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  BlockCache cache(5000);
  REQUIRE(cache.num_shards() == 1);
  LruModel model;
  model.capacity = 5000;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t f = rng() % 4;
    const uint64_t o = (rng() % 50) * 4096;
    switch (rng() % 10) {
      case 0:
        cache.erase_file(f);
        for (auto it = model.order.begin(); it != model.order.end();) {
          if (it->first.first == f) {
            model.usage -= it->second;
            it = model.order.erase(it);
          } else {
            ++it;
          }
        }
        break;
      case 1:
      case 2:
      case 3: {
        const bool hit = model.lookup(f, o);
        auto v = cache.lookup(f, o);
        REQUIRE((v != nullptr) == hit);
        if (v) CHECK(text_of(v) == std::to_string(f) + "@" + std::to_string(o));
        break;
      }
      default: {
        const size_t charge = rng() % 10 == 0 ? rng() % 6000 : rng() % 800;
        cache.insert(f, o, value_of(f, o), charge);
        model.insert(f, o, charge);
        break;
      }
    }
    REQUIRE(cache.usage() == model.usage);
    REQUIRE(cache.usage() <= cache.capacity());
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
          cache.insert(f, o, value_of(f, o), 1024 + rng() % 65536);
        } else {
          auto v = cache.lookup(f, o);
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
