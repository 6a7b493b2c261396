// skv-test-modules: util
// SnapshotRegistry and StripedPtr: the striped structures behind a read's begin() and its view of
// the tree agree with one lock's worth of state whichever threads touch them.

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "txn/snapshot_registry.h"
#include "util/striped_ptr.h"

using namespace skv;

TEST_CASE("registrations count per sequence number and list once each", "[snapshots]") {
  SnapshotRegistry reg;
  std::atomic<SequenceNumber> visible{7};
  CHECK(reg.acquire(visible) == 7);
  CHECK(reg.acquire(visible) == 7);
  visible.store(9);
  CHECK(reg.acquire(visible) == 9);
  reg.retain(9);
  CHECK(reg.size() == 4);
  CHECK(reg.list() == std::vector<SequenceNumber>{7, 9});
  reg.release(7);
  CHECK(reg.list() == std::vector<SequenceNumber>{7, 9});
  reg.release(7);
  CHECK(reg.list() == std::vector<SequenceNumber>{9});
  reg.release(9);
  reg.release(9);
  CHECK(reg.list().empty());
  CHECK(reg.size() == 0);

  StripedPtr<int> p;
  CHECK(p.load() == nullptr);
  auto one = std::make_shared<const int>(1);
  std::weak_ptr<const int> watch = one;
  p.store(one);
  one.reset();
  REQUIRE(p.load() != nullptr);
  CHECK(*p.load() == 1);
  p.store(std::make_shared<const int>(2));
  CHECK(watch.expired());
  CHECK(*p.load() == 2);
}

#ifndef __EMSCRIPTEN__  // the wasm build has no threads
TEST_CASE("snapshots registered on many threads are listed once and released anywhere",
          "[snapshots]") {
  SnapshotRegistry reg;
  std::atomic<SequenceNumber> visible{10};
  // Every thread registers at 10, 20 and 30 (twice at 20); the main thread releases some later.
  std::vector<std::thread> threads;
  for (int t = 0; t < 20; ++t) {
    threads.emplace_back([&] {
      std::atomic<SequenceNumber> mine{20};
      CHECK(reg.acquire(visible) == 10);
      CHECK(reg.acquire(mine) == 20);
      reg.retain(20);
      mine.store(30);
      CHECK(reg.acquire(mine) == 30);
    });
  }
  for (auto& th : threads) th.join();
  CHECK(reg.size() == 80);
  CHECK(reg.list() == std::vector<SequenceNumber>{10, 20, 30});

  // Released from a thread that registered none of them: each release takes exactly one.
  for (int i = 0; i < 20; ++i) reg.release(30);
  CHECK(reg.list() == std::vector<SequenceNumber>{10, 20});
  for (int i = 0; i < 39; ++i) reg.release(20);
  CHECK(reg.list() == std::vector<SequenceNumber>{10, 20});
  reg.release(20);
  CHECK(reg.list() == std::vector<SequenceNumber>{10});
  CHECK(reg.size() == 20);
}

TEST_CASE("the registry matches a single multiset under random concurrent use", "[snapshots]") {
  SnapshotRegistry reg;
  std::atomic<SequenceNumber> visible{0};
  std::vector<std::vector<SequenceNumber>> held(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < held.size(); ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (int i = 0; i < 5000; ++i) {
        if (rng() % 3 != 0 || held[t].empty()) {
          held[t].push_back(reg.acquire(visible));
          if (rng() % 7 == 0) visible.fetch_add(1);
        } else {
          reg.release(held[t].back());
          held[t].pop_back();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  std::map<SequenceNumber, int> want;
  size_t total = 0;
  for (const auto& h : held) {
    for (SequenceNumber s : h) ++want[s];
    total += h.size();
  }
  std::vector<SequenceNumber> want_list;
  for (const auto& [s, n] : want) want_list.push_back(s);
  CHECK(reg.size() == total);
  CHECK(reg.list() == want_list);
}

namespace {

// Loads `p` on 32 threads (each its own stripe); returns how many did not see `want`.
int loads_on_threads(const StripedPtr<int>& p, int want) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&] {
      auto v = p.load();
      if (v == nullptr || *v != want) wrong.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  return wrong.load();
}

}  // namespace

TEST_CASE("a striped pointer publishes to every thread and lets the old value go", "[snapshots]") {
  StripedPtr<int> p;
  CHECK(p.load() == nullptr);
  auto first = std::make_shared<const int>(1);
  std::weak_ptr<const int> first_watch = first;
  p.store(first);
  first.reset();
  CHECK(loads_on_threads(p, 1) == 0);
  CHECK_FALSE(first_watch.expired());  // every stripe holds it

  p.store(std::make_shared<const int>(2));
  CHECK(first_watch.expired());  // replaced in every stripe
  CHECK(loads_on_threads(p, 2) == 0);
  p.store(nullptr);
  CHECK(p.load() == nullptr);
}
#endif  // __EMSCRIPTEN__
