// QueueExecutor: an Executor that owns no threads. schedule() only queues; tasks run, first in
// first out, on whichever thread calls run_pending(). Nothing ever runs on its own, so the host
// decides exactly when background work (flush, compaction) happens:
//   - in the browser build the JavaScript wrapper drives it between calls, in bounded steps, so
//     background work never blocks the worker for long (the OPFS platform's own executor);
//   - tests and the deterministic simulation run it at chosen points (the in-memory platform's
//     own executor);
//   - any single-threaded host can drive it from its event loop.
//
// Thread safety: schedule(), run_pending() and pending() may be called from several threads at
// once (a mutex guards the queue); each task runs on the thread that dequeued it, with no lock
// held, so a task may schedule more tasks (they go to the back of the queue). Not copyable.

#ifndef SKV_QUEUE_EXECUTOR_H_
#define SKV_QUEUE_EXECUTOR_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "skv/platform.h"

namespace skv {

class QueueExecutor final : public Executor {
 public:
  QueueExecutor() = default;
  QueueExecutor(const QueueExecutor&) = delete;
  QueueExecutor& operator=(const QueueExecutor&) = delete;
  // Tasks still queued are destroyed without running.
  ~QueueExecutor() override = default;

  void schedule(std::function<void()> task) override;
  bool concurrent() const override { return false; }

  // Runs up to `max_tasks` queued tasks in FIFO order on the calling thread, including tasks
  // queued by the tasks it runs; returns how many ran. An empty task counts as run.
  size_t run_pending(size_t max_tasks) override;

  // Runs tasks until the queue is empty or `limit` tasks ran; returns how many ran.
  size_t run_all(size_t limit = static_cast<size_t>(-1)) { return run_pending(limit); }

  // Number of queued tasks.
  size_t pending() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::function<void()>> queue_;
};

}  // namespace skv

#endif  // SKV_QUEUE_EXECUTOR_H_
