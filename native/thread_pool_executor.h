// ThreadPoolExecutor: the native Executor. A fixed number of worker threads take scheduled tasks
// from one queue, first in first out, so background work (flush, compaction) makes progress on
// its own: concurrent() is true and run_pending() never runs anything.
//
// Destruction drains: the destructor lets the workers run every task still queued (and any task
// those tasks schedule), then joins them. It may run on one of the pool's own workers (a task
// that drops the last owner of the executor); that worker is then detached instead of joined, and
// finishes the queue after the destructor returns, on state it shares with the pool.
//
// Thread safety: schedule(), wait_idle() and the other methods may be called from several
// threads at once, including from tasks. Tasks run with no lock held. A task must not throw.

#ifndef SKV_NATIVE_THREAD_POOL_EXECUTOR_H_
#define SKV_NATIVE_THREAD_POOL_EXECUTOR_H_

#include <cstddef>
#include <functional>
#include <memory>

#include "skv/platform.h"

namespace skv {

class ThreadPoolExecutor final : public Executor {
 public:
  static constexpr size_t kDefaultThreads = 2;

  // Starts `threads` workers (at least one).
  explicit ThreadPoolExecutor(size_t threads = kDefaultThreads);
  ThreadPoolExecutor(const ThreadPoolExecutor&) = delete;
  ThreadPoolExecutor& operator=(const ThreadPoolExecutor&) = delete;
  // Runs the queued tasks, then joins the workers (see above).
  ~ThreadPoolExecutor() override;

  // Queues `task` for a worker. An empty function is ignored.
  void schedule(std::function<void()> task) override;
  bool concurrent() const override { return true; }
  // Never runs anything here: the workers do. Returns 0.
  size_t run_pending(size_t /*max_tasks*/) override { return 0; }

  size_t thread_count() const;

  // Blocks until no task is queued or running. REQUIRES: not called from a task of this pool
  // (it would wait for itself).
  void wait_idle();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace skv

#endif  // SKV_NATIVE_THREAD_POOL_EXECUTOR_H_
