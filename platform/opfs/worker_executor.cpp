#include "platform/opfs/worker_executor.h"

#include <utility>

namespace skv {

void WorkerExecutor::schedule(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(task));
}

size_t WorkerExecutor::run_pending(size_t max_tasks) {
  size_t ran = 0;
  for (; ran < max_tasks; ++ran) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) break;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    if (task) task();
  }
  return ran;
}

size_t WorkerExecutor::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace skv
