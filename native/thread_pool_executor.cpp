// The native thread pool. See thread_pool_executor.h.

#include "native/thread_pool_executor.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace skv {

// Shared by the executor and its workers, so a worker detached by a destructor running on it
// still has a queue to finish.
struct ThreadPoolExecutor::State {
  std::mutex mu;
  std::condition_variable work_cv;  // a task was queued, or stopping was set
  std::condition_variable idle_cv;  // the queue emptied with nothing running
  std::deque<std::function<void()>> tasks;
  size_t running = 0;
  bool stopping = false;
  std::vector<std::thread> threads;  // written by the constructor and destructor only

  void work() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      work_cv.wait(lock, [this] { return stopping || !tasks.empty(); });
      if (tasks.empty()) return;  // stopping, and nothing left to drain
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      ++running;
      lock.unlock();
      task();
      // Destroy what the task captured before taking the lock: releasing it may run arbitrary
      // code, even this pool's destructor.
      task = nullptr;
      lock.lock();
      --running;
      if (running == 0 && tasks.empty()) idle_cv.notify_all();
    }
  }
};

ThreadPoolExecutor::ThreadPoolExecutor(size_t threads) : state_(std::make_shared<State>()) {
  if (threads == 0) threads = 1;
  state_->threads.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    std::shared_ptr<State> state = state_;
    state_->threads.emplace_back([state] { state->work(); });
  }
}

ThreadPoolExecutor::~ThreadPoolExecutor() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stopping = true;
  }
  state_->work_cv.notify_all();
  const std::thread::id self = std::this_thread::get_id();
  for (std::thread& t : state_->threads) {
    if (t.get_id() == self) {
      t.detach();
    } else {
      t.join();
    }
  }
}

void ThreadPoolExecutor::schedule(std::function<void()> task) {
  if (!task) return;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->tasks.push_back(std::move(task));
  }
  state_->work_cv.notify_one();
}

size_t ThreadPoolExecutor::thread_count() const { return state_->threads.size(); }

void ThreadPoolExecutor::wait_idle() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->idle_cv.wait(lock, [this] { return state_->running == 0 && state_->tasks.empty(); });
}

}  // namespace skv
