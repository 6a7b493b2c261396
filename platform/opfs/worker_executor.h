// WorkerExecutor: the Executor of the browser build. A Web Worker has one thread, so schedule()
// only queues; the JS wrapper calls run_pending() between calls (in bounded steps, so flushes and
// compactions never block the worker for long). Tasks run first in first out, on the thread that
// calls run_pending(); a task may schedule more (they go to the back of the queue).
//
// Thread safety: schedule(), run_pending() and pending() may be called from several threads at
// once (a mutex guards the queue, never held while a task runs).

#ifndef SKV_PLATFORM_OPFS_WORKER_EXECUTOR_H_
#define SKV_PLATFORM_OPFS_WORKER_EXECUTOR_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "skv/platform.h"

namespace skv {

class WorkerExecutor final : public Executor {
 public:
  WorkerExecutor() = default;
  WorkerExecutor(const WorkerExecutor&) = delete;
  WorkerExecutor& operator=(const WorkerExecutor&) = delete;
  // Tasks still queued are destroyed without running.
  ~WorkerExecutor() override = default;

  void schedule(std::function<void()> task) override;
  bool concurrent() const override { return false; }
  // Runs up to `max_tasks` queued tasks; returns how many ran.
  size_t run_pending(size_t max_tasks) override;
  size_t pending() const;

 private:
  mutable std::mutex mu_;
  std::deque<std::function<void()>> queue_;
};

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_WORKER_EXECUTOR_H_
