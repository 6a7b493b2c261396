// skv-test-modules: util posix native
// skv-test-wasm: off
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "native/thread_pool_executor.h"

using namespace skv;
using namespace std::chrono_literals;

namespace {

// Waits up to ~10 s for `done`; true if it became true.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 10000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

}  // namespace

TEST_CASE("tasks run on worker threads without run_pending", "[thread_pool]") {
  ThreadPoolExecutor pool;
  CHECK(pool.thread_count() == ThreadPoolExecutor::kDefaultThreads);
  CHECK(pool.concurrent());

  std::atomic<int> count{0};
  std::mutex mu;
  std::set<std::thread::id> ids;
  for (int i = 0; i < 1000; ++i) {
    pool.schedule([&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      count.fetch_add(1);
    });
  }
  CHECK(pool.run_pending(100) == 0);
  pool.wait_idle();
  CHECK(count.load() == 1000);
  std::lock_guard<std::mutex> lock(mu);
  CHECK(ids.count(std::this_thread::get_id()) == 0);
  CHECK(ids.size() <= pool.thread_count());
}

TEST_CASE("the workers run tasks at the same time", "[thread_pool]") {
  ThreadPoolExecutor pool(2);
  // Each task waits for the other: only two concurrent workers let both finish.
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> finished{0};
  for (int i = 0; i < 2; ++i) {
    pool.schedule([&] {
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      cv.notify_all();
      if (cv.wait_for(lock, 10s, [&] { return arrived == 2; })) finished.fetch_add(1);
    });
  }
  pool.wait_idle();
  CHECK(finished.load() == 2);
}

TEST_CASE("zero threads means one - empty tasks are ignored", "[thread_pool]") {
  ThreadPoolExecutor pool(0);
  CHECK(pool.thread_count() == 1);
  pool.schedule(std::function<void()>());
  std::atomic<bool> ran{false};
  pool.schedule([&] { ran = true; });
  pool.wait_idle();
  CHECK(ran.load());
}

TEST_CASE("tasks may schedule more tasks", "[thread_pool]") {
  ThreadPoolExecutor pool(2);
  std::atomic<int> count{0};
  std::function<void(int)> chain = [&](int left) {
    count.fetch_add(1);
    if (left > 0) pool.schedule([&chain, left] { chain(left - 1); });
  };
  pool.schedule([&] { chain(99); });
  REQUIRE(eventually([&] { return count.load() == 100; }));
  pool.wait_idle();
  CHECK(count.load() == 100);
}

TEST_CASE("destruction runs the queued tasks, then joins", "[thread_pool]") {
  std::atomic<int> count{0};
  std::atomic<bool> gate{false};
  {
    ThreadPoolExecutor pool(1);
    pool.schedule([&] {
      while (!gate.load()) std::this_thread::sleep_for(1ms);
      count.fetch_add(1);
    });
    for (int i = 0; i < 50; ++i) {
      pool.schedule([&] {
        std::this_thread::sleep_for(100us);
        count.fetch_add(1);
      });
    }
    gate = true;  // everything above is still queued when the destructor starts
  }
  CHECK(count.load() == 51);
}

TEST_CASE("the last owner may be released inside a task", "[thread_pool]") {
  struct Owner {
    Owner(std::shared_ptr<ThreadPoolExecutor> p, std::atomic<bool>* d)
        : pool(std::move(p)), destroyed(d) {}
    ~Owner() { destroyed->store(true); }
    std::shared_ptr<ThreadPoolExecutor> pool;
    std::atomic<bool>* destroyed;
  };
  std::atomic<int> after{0};
  for (size_t threads : {size_t{1}, size_t{2}}) {
    INFO("threads " << threads);
    std::atomic<bool> destroyed{false};
    std::atomic<bool> gate{false};
    auto pool = std::make_shared<ThreadPoolExecutor>(threads);
    std::weak_ptr<ThreadPoolExecutor> weak = pool;
    auto owner = std::make_shared<Owner>(pool, &destroyed);
    // Once the gate opens, the task holds the pool's last reference and drops it: the destructor
    // runs on a worker of that very pool.
    pool->schedule([owner, &gate]() mutable {
      while (!gate.load()) std::this_thread::sleep_for(1ms);
      owner.reset();
    });
    pool->schedule([&after] { after.fetch_add(1); });
    owner.reset();
    pool.reset();
    CHECK_FALSE(weak.expired());
    gate = true;
    REQUIRE(eventually([&] { return destroyed.load() && weak.expired(); }));
  }
  // Tasks queued behind the releasing one still ran.
  CHECK(eventually([&] { return after.load() == 2; }));
}
