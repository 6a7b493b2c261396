// QueueExecutor (see skv/queue_executor.h): a mutex-guarded FIFO of tasks run by run_pending().

#include "skv/queue_executor.h"

#include <utility>

namespace skv {

void QueueExecutor::schedule(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(task));
}

size_t QueueExecutor::run_pending(size_t max_tasks) {
  size_t ran = 0;
  while (ran < max_tasks) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) break;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (task) task();
    ++ran;
  }
  return ran;
}

size_t QueueExecutor::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace skv
