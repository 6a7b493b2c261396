// skv-test-modules: util memtable
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "memtable/arena.h"
#include "memtable/skiplist.h"

using namespace skv;

namespace {

struct U64Compare {
  int operator()(uint64_t a, uint64_t b) const { return a < b ? -1 : (a > b ? 1 : 0); }
};
using List = SkipList<uint64_t, U64Compare>;

// Checks the iterator is where the model iterator is (end() meaning invalid).
void check_at(const List::Iterator& it, const std::set<uint64_t>& model,
              std::set<uint64_t>::const_iterator m) {
  if (m == model.end()) {
    CHECK_FALSE(it.valid());
  } else {
    REQUIRE(it.valid());
    CHECK(it.key() == *m);
  }
}

}  // namespace

TEST_CASE("an empty skiplist has nothing to find", "[skiplist]") {
  Arena arena;
  List list(U64Compare(), &arena);
  CHECK_FALSE(list.contains(0));
  List::Iterator it(&list);
  CHECK_FALSE(it.valid());
  it.seek_first();
  CHECK_FALSE(it.valid());
  it.seek_last();
  CHECK_FALSE(it.valid());
  it.seek(5);
  CHECK_FALSE(it.valid());
  it.seek_for_prev(5);
  CHECK_FALSE(it.valid());
}

TEST_CASE("skiplist matches a std::set in both directions", "[skiplist]") {
  const uint64_t seed = 1234567;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena;
  List list(U64Compare(), &arena, seed);
  std::set<uint64_t> model;
  for (int i = 0; i < 5000; ++i) {
    uint64_t k = rng() % 20000;
    if (model.insert(k).second) list.insert(k);
  }
  for (uint64_t k = 0; k < 20000; k += 3) CHECK(list.contains(k) == (model.count(k) == 1));

  // Full scans.
  List::Iterator it(&list);
  std::vector<uint64_t> forward, backward;
  for (it.seek_first(); it.valid(); it.next()) forward.push_back(it.key());
  for (it.seek_last(); it.valid(); it.prev()) backward.push_back(it.key());
  CHECK(forward == std::vector<uint64_t>(model.begin(), model.end()));
  CHECK(backward == std::vector<uint64_t>(model.rbegin(), model.rend()));

  // Seeks, then a random walk that switches direction.
  for (int round = 0; round < 2000; ++round) {
    const uint64_t target = rng() % 20100;
    std::set<uint64_t>::const_iterator m;
    if (rng() % 2 == 0) {
      it.seek(target);
      m = model.lower_bound(target);
    } else {
      it.seek_for_prev(target);
      m = model.upper_bound(target);
      m = m == model.begin() ? model.end() : std::prev(m);
    }
    check_at(it, model, m);
    for (int step = 0; step < 10 && it.valid(); ++step) {
      if (rng() % 2 == 0) {
        it.next();
        ++m;
      } else {
        it.prev();
        m = m == model.begin() ? model.end() : std::prev(m);
      }
      check_at(it, model, m);
    }
  }
}

TEST_CASE("the same seed builds the same list", "[skiplist]") {
  Arena a1, a2, a3;
  List l1(U64Compare(), &a1, 7), l2(U64Compare(), &a2, 7), l3(U64Compare(), &a3, 8);
  for (uint64_t k = 0; k < 3000; ++k) {
    l1.insert(k * 7919 % 3001);
    l2.insert(k * 7919 % 3001);
    l3.insert(k * 7919 % 3001);
  }
  // Node sizes follow the drawn heights, so equal seeds use equal memory.
  CHECK(a1.memory_usage() == a2.memory_usage());
  List::Iterator i1(&l1), i3(&l3);
  i1.seek_first();
  i3.seek_first();
  for (; i1.valid() && i3.valid(); i1.next(), i3.next()) REQUIRE(i1.key() == i3.key());
  CHECK_FALSE(i1.valid());
  CHECK_FALSE(i3.valid());
}

namespace {

// Keys stored as NUL-terminated strings, as the memtable stores entries: by pointer.
struct CStrCompare {
  int operator()(const char* a, const char* b) const {
    if (a == nullptr || b == nullptr) return (a != nullptr) - (b != nullptr);  // head's key
    return std::string_view(a).compare(b);
  }
};

}  // namespace

TEST_CASE("keys written into their nodes' room sort and stay intact", "[skiplist]") {
  const uint64_t seed = 4242;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena;
  SkipList<const char*, CStrCompare> list(CStrCompare(), &arena, seed);
  std::set<std::string> model;
  std::vector<std::pair<const char*, std::string>> written;
  for (int i = 0; i < 5000; ++i) {
    std::string k = "key" + std::to_string(rng() % 100000) + std::string(rng() % 40, 'x');
    if (!model.insert(k).second) continue;
    if (i % 5 == 0) {
      // The plain insert of a key kept elsewhere in the arena, mixed in.
      char* mem = arena.allocate(k.size() + 1);
      std::memcpy(mem, k.c_str(), k.size() + 1);
      list.insert(mem);
      written.emplace_back(mem, k);
      continue;
    }
    char* room_seen = nullptr;
    list.insert_with_room(k.size() + 1, [&](char* room) -> const char* {
      room_seen = room;
      std::memcpy(room, k.c_str(), k.size() + 1);
      return room;
    });
    REQUIRE(room_seen != nullptr);
    written.emplace_back(room_seen, k);
  }
  // No node's links overwrote a key, nor a key another's links.
  for (const auto& [ptr, k] : written) REQUIRE(std::string(ptr) == k);
  SkipList<const char*, CStrCompare>::Iterator it(&list);
  it.seek_first();
  for (const std::string& k : model) {
    REQUIRE(it.valid());
    REQUIRE(std::string(it.key()) == k);
    it.next();
  }
  CHECK_FALSE(it.valid());
  for (const std::string& k : model) REQUIRE(list.contains(k.c_str()));
  CHECK_FALSE(list.contains("key-absent"));
}

// Threads: native builds only (the wasm32 build has none).
#ifndef __EMSCRIPTEN__
namespace {

// Keys carry a check value so a reader can tell a well-formed key from torn memory.
uint64_t make_key(uint64_t x) { return (x << 16) | ((x * 0x9e3779b97f4a7c15ull) >> 48); }
bool well_formed(uint64_t k) { return make_key(k >> 16) == k; }

}  // namespace

TEST_CASE("readers see sorted, well-formed keys while one writer inserts", "[skiplist]") {
  const uint64_t seed = 2718;
  INFO("seed " << seed);
  constexpr int kKeys = 30000;
  std::vector<uint64_t> order(kKeys);
  {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < kKeys; ++i) order[static_cast<size_t>(i)] = make_key(rng() >> 20);
    std::sort(order.begin(), order.end());
    order.erase(std::unique(order.begin(), order.end()), order.end());
    std::shuffle(order.begin(), order.end(), rng);
  }
  Arena arena;
  List list(U64Compare(), &arena);
  std::atomic<size_t> published{0};
  std::atomic<bool> done{false};

  std::atomic<int> failures{0};
  std::atomic<int> started{0};
  std::atomic<int> passes_while_writing{0};
  auto reader = [&](uint64_t reader_seed) {
    std::mt19937_64 rng(reader_seed);
    started.fetch_add(1);
    List::Iterator it(&list);
    int passes = 0;
    while (!done.load(std::memory_order_acquire) || passes < 2) {
      const size_t visible = published.load(std::memory_order_acquire);
      // Every key inserted before `visible` was read must be found.
      for (int i = 0; i < 50 && visible > 0; ++i) {
        const uint64_t k = order[rng() % visible];
        if (!list.contains(k)) failures.fetch_add(1);
        it.seek(k);
        if (!it.valid() || it.key() != k) failures.fetch_add(1);
      }
      // A scan, forward or backward, is strictly ordered, well-formed and sees at least `visible`.
      size_t seen = 0;
      if (passes % 4 == 3) {
        uint64_t last = UINT64_MAX;
        for (it.seek_last(); it.valid() && seen < 3000; it.prev(), ++seen) {
          if (!well_formed(it.key()) || it.key() >= last) failures.fetch_add(1);
          last = it.key();
        }
      } else {
        bool first = true;
        uint64_t last = 0;
        for (it.seek_first(); it.valid(); it.next(), ++seen) {
          if (!well_formed(it.key()) || (!first && it.key() <= last)) failures.fetch_add(1);
          first = false;
          last = it.key();
        }
        if (seen < visible) failures.fetch_add(1);
      }
      ++passes;
      if (!done.load(std::memory_order_acquire)) passes_while_writing.fetch_add(1);
    }
  };
  std::thread r1(reader, seed + 1);
  std::thread r2(reader, seed + 2);
  while (started.load() < 2) std::this_thread::yield();
  for (size_t i = 0; i < order.size(); ++i) {
    list.insert(order[i]);
    published.store(i + 1, std::memory_order_release);
    if (i % 16 == 0) std::this_thread::yield();  // let the readers interleave
  }
  done.store(true, std::memory_order_release);
  r1.join();
  r2.join();
  CHECK(failures.load() == 0);
  INFO("reader passes while writing: " << passes_while_writing.load());
  CHECK(passes_while_writing.load() > 0);
  List::Iterator it(&list);
  size_t n = 0;
  for (it.seek_first(); it.valid(); it.next()) ++n;
  CHECK(n == order.size());
}
#endif  // __EMSCRIPTEN__
