// skv-test-modules: util
// skv-test-wasm: off
// Future and Promise (skv/future.h), natively with threads: plain futures, and futures whose
// waiters share one WakeGroup (the commit pipeline's one wake-up per group).

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "skv/future.h"

using namespace skv;
using namespace std::chrono_literals;

namespace {

// Waits up to 10 s for `count` to reach `want`; true if it did.
bool reaches(const std::atomic<int>& count, int want) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (count.load() < want) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// After a failed reaches(): calls wake() until `count` reaches `want`, so the threads can be
// joined; if they stay stuck for 10 s more, ends the process (joining would hang).
void release(const std::atomic<int>& count, int want, const std::function<void()>& wake) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (count.load() < want) {
    wake();
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "future_test: waiters stuck after repeated wake-ups\n");
      std::_Exit(1);
    }
    std::this_thread::sleep_for(1ms);
  }
}

}  // namespace

TEST_CASE("a plain future wakes its waiter and runs its callbacks once", "[future]") {
  Promise<int> p;
  Future<int> f = p.future();
  std::atomic<int> calls{0}, seen{0};
  f.on_ready([&](const int& v) { seen.store(v), calls.fetch_add(1); });
  std::thread waiter([&] { CHECK(f.wait() == 7); });
  CHECK_FALSE(f.ready());
  p.set(7);
  p.set(8);  // ignored: the first value wins
  waiter.join();
  CHECK(f.ready());
  CHECK(f.get() == 7);
  CHECK(calls.load() == 1);
  CHECK(seen.load() == 7);
  f.on_ready([&](const int& v) { seen.store(v + 1); });  // runs at once
  CHECK(seen.load() == 8);
}

TEST_CASE("one wake_all wakes every waiter of a group", "[future]") {
  auto group = std::make_shared<WakeGroup>();
  constexpr int kWaiters = 16;
  std::vector<Promise<int>> promises(kWaiters);
  for (auto& p : promises) p.join(group);
  std::atomic<int> returned{0}, wrong{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      if (promises[i].future().wait() != i) wrong.fetch_add(1);
      returned.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(20ms);  // most of them asleep by now
  std::atomic<int> callbacks{0};
  promises[3].future().on_ready([&](const int&) { callbacks.fetch_add(1); });
  for (int i = 0; i < kWaiters; ++i) promises[i].set_without_wake(i);
  CHECK(callbacks.load() == 1);  // callbacks run at completion, wake-up or not
  group->wake_all();
  const bool all = reaches(returned, kWaiters);
  CHECK(all);
  release(returned, kWaiters, [&] { group->wake_all(); });
  for (auto& t : waiters) t.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("a wake-up of a group leaves its unfinished waiters asleep", "[future]") {
  auto group = std::make_shared<WakeGroup>();
  Promise<int> first, second;
  first.join(group);
  second.join(group);
  std::atomic<int> first_done{0}, second_done{0};
  std::thread a([&] {
    first.future().wait();
    first_done.store(1);
  });
  std::thread b([&] {
    second.future().wait();
    second_done.store(1);
  });
  first.set(1);  // set() on a joined promise wakes the group itself
  CHECK(reaches(first_done, 1));
  std::this_thread::sleep_for(20ms);
  CHECK(second_done.load() == 0);  // woken too, but its future is not complete
  CHECK_FALSE(second.future().ready());
  second.set(2);
  CHECK(reaches(second_done, 1));
  a.join();
  b.join();
}

TEST_CASE("completions racing with waiters that are about to sleep lose no wake-up", "[future]") {
  // A completer and waiters run at full speed over many small groups, so completions land in
  // every window of a waiter's wait (before its check, between check and sleep, asleep). A lost
  // wake-up would leave a waiter stuck: the watchdog below notices and fails the test.
  constexpr int kWaiters = 3, kGroups = 3000;
  std::vector<std::shared_ptr<WakeGroup>> groups(kGroups);
  // (Promises are handles: each one here is built on its own, not copied from another.)
  std::vector<std::vector<Promise<int>>> promises(kGroups);
  for (int g = 0; g < kGroups; ++g) {
    groups[g] = std::make_shared<WakeGroup>();
    promises[g].resize(kWaiters);
    for (auto& p : promises[g]) p.join(groups[g]);
  }
  std::atomic<int> finished{0}, wrong{0};
  std::vector<std::thread> waiters;
  for (int w = 0; w < kWaiters; ++w) {
    waiters.emplace_back([&, w] {
      for (int g = 0; g < kGroups; ++g) {
        if (promises[g][w].future().wait() != g) wrong.fetch_add(1);
      }
      finished.fetch_add(1);
    });
  }
  std::thread completer([&] {
    for (int g = 0; g < kGroups; ++g) {
      for (auto& p : promises[g]) p.set_without_wake(g);
      groups[g]->wake_all();
    }
  });
  completer.join();
  const bool all = reaches(finished, kWaiters);
  CHECK(all);
  release(finished, kWaiters, [&] {
    for (auto& g : groups) g->wake_all();
  });
  for (auto& t : waiters) t.join();
  CHECK(wrong.load() == 0);
}
