// skv-test-modules: util
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "skv/queue_executor.h"

using namespace skv;

TEST_CASE("tasks wait for run_pending and run first in first out", "[queue_executor]") {
  QueueExecutor q;
  CHECK_FALSE(q.concurrent());
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) q.schedule([&order, i] { order.push_back(i); });
  CHECK(order.empty());
  CHECK(q.pending() == 5);

  CHECK(q.run_pending(2) == 2);
  CHECK(order == std::vector<int>{0, 1});
  CHECK(q.pending() == 3);
  CHECK(q.run_pending(100) == 3);
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(q.run_pending(100) == 0);
  CHECK(q.run_pending(0) == 0);
}

TEST_CASE("tasks queued by tasks go to the back and run in the same call", "[queue_executor]") {
  QueueExecutor q;
  std::string trace;
  q.schedule([&] {
    trace += 'a';
    q.schedule([&] {
      trace += 'c';
      q.schedule([&] { trace += 'd'; });
    });
  });
  q.schedule([&] { trace += 'b'; });

  CHECK(q.run_pending(3) == 3);
  CHECK(trace == "abc");
  CHECK(q.pending() == 1);
  CHECK(q.run_all() == 1);
  CHECK(trace == "abcd");
}

TEST_CASE("run_all stops at its limit", "[queue_executor]") {
  QueueExecutor q;
  int runs = 0;
  // A task that always queues another never drains; the limit bounds the work.
  std::function<void()> forever = [&] {
    ++runs;
    q.schedule(forever);
  };
  q.schedule(forever);
  CHECK(q.run_all(10) == 10);
  CHECK(runs == 10);
  CHECK(q.pending() == 1);
}

TEST_CASE("queued tasks are destroyed without running", "[queue_executor]") {
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> watch = token;
  bool ran = false;
  {
    QueueExecutor q;
    q.schedule([token, &ran] { ran = true; });
    token.reset();
    CHECK_FALSE(watch.expired());  // the queue holds the task
  }
  CHECK(watch.expired());
  CHECK_FALSE(ran);
}

TEST_CASE("an empty task counts as run", "[queue_executor]") {
  QueueExecutor q;
  q.schedule(std::function<void()>());
  CHECK(q.run_pending(5) == 1);
  CHECK(q.pending() == 0);
}
