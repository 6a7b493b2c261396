// Future<T> and Promise<T>: skv's own small one-shot future, used for commit() and flush().
//
// A Promise is completed once, by whichever thread finishes the work; its Future can be polled
// (ready()), waited on (wait(), natively), or given a callback (on_ready()). Unlike std::future it
// works in single-threaded WebAssembly, where nothing may block: there the JS wrapper attaches a
// callback and resolves a Promise from it.
//
// Thread safety: all members are safe to call from several threads. Future and Promise are
// copyable handles to one shared state.
//
// Waking many waiters at once: a promise may join a WakeGroup before its future is handed out.
// Its waiters then sleep on the group's one word instead of the future's own condition variable,
// and whoever completes a batch of the group's promises with set_without_wake() wakes all their
// waiters with one WakeGroup::wake_all() (one system call, not one per waiter). The commit
// pipeline puts each group of commits in one WakeGroup.

#ifndef SKV_FUTURE_H_
#define SKV_FUTURE_H_

#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "skv/status.h"

namespace skv {

// Waiters of several futures sleeping on one word (see above). Natively on Linux the word is a
// futex; elsewhere a mutex and a condition variable.
class WakeGroup {
 public:
  WakeGroup() = default;
  WakeGroup(const WakeGroup&) = delete;
  WakeGroup& operator=(const WakeGroup&) = delete;

  // Blocks until `done` is true. `done` is set (sequentially consistent) before the wake_all()
  // that follows it.
  void wait_until(const std::atomic<bool>& done);
  // Wakes every thread in wait_until() on this group, to check its own `done` again.
  void wake_all();

 private:
  std::atomic<uint32_t> word_{0};
  std::atomic<uint32_t> sleepers_{0};
#if !defined(__linux__)
  std::mutex mu_;
  std::condition_variable cv_;
#endif
};

namespace detail {
template <typename T>
struct FutureState {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<T> value;
  std::atomic<bool> done{false};     // value is set
  std::shared_ptr<WakeGroup> group;  // fixed before the future is handed out
  std::vector<std::function<void(const T&)>> callbacks;
};
}  // namespace detail

template <typename T>
class Future {
 public:
  // A future that is already complete.
  static Future<T> make_ready(T value) {
    Future<T> f;
    f.state_->value.emplace(std::move(value));
    f.state_->done.store(true);
    return f;
  }

  Future() : state_(std::make_shared<detail::FutureState<T>>()) {}

  bool ready() const { return state_->done.load(); }

  // Blocks until the value is set, then returns it. The reference lives as long as any handle.
  // REQUIRES: another thread completes the promise, or it is already complete. In single-threaded
  // builds only call this when ready() is true.
  const T& wait() const {
    if (state_->group) {
      state_->group->wait_until(state_->done);
      return *state_->value;
    }
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->value.has_value(); });
    return *state_->value;
  }

  // Same as wait(), returning a copy.
  T get() const { return wait(); }

  // Runs `cb` with the value once it is set: at once (on this thread) if it already is, else on
  // the thread that completes the promise. Callbacks must be quick and must not block.
  void on_ready(std::function<void(const T&)> cb) const {
    std::unique_lock<std::mutex> lock(state_->mu);
    if (state_->value.has_value()) {
      lock.unlock();
      cb(*state_->value);
      return;
    }
    state_->callbacks.push_back(std::move(cb));
  }

 private:
  template <typename U>
  friend class Promise;
  std::shared_ptr<detail::FutureState<T>> state_;
};

template <typename T>
class Promise {
 public:
  Promise() = default;
  Future<T> future() const { return future_; }

  // Makes the future's waiters sleep on `group` (see the top of this file).
  // REQUIRES: the future is not handed out yet and the promise not completed.
  void join(std::shared_ptr<WakeGroup> group) const { future_.state_->group = std::move(group); }

  // Completes the future. Later calls are ignored (the first value wins).
  void set(T value) const {
    std::vector<std::function<void(const T&)>> cbs;
    if (!store(std::move(value), &cbs)) return;
    auto& st = *future_.state_;
    if (st.group) {
      st.group->wake_all();
    } else {
      st.cv.notify_all();
    }
    for (auto& cb : cbs) cb(*st.value);
  }

  // Completes the future without waking its waiters. REQUIRES: the promise joined a WakeGroup,
  // and the caller calls that group's wake_all() afterwards.
  void set_without_wake(T value) const {
    assert(future_.state_->group);
    std::vector<std::function<void(const T&)>> cbs;
    if (!store(std::move(value), &cbs)) return;
    for (auto& cb : cbs) cb(*future_.state_->value);
  }

 private:
  // Sets the value and takes the callbacks; false if the future was already complete.
  bool store(T value, std::vector<std::function<void(const T&)>>* cbs) const {
    auto& st = *future_.state_;
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.value.has_value()) return false;
    st.value.emplace(std::move(value));
    st.done.store(true);
    cbs->swap(st.callbacks);
    return true;
  }

  Future<T> future_;
};

// The result of Transaction::commit(): OK once the commit is visible (and durable, when its
// durability asked for that), or the reason it failed (Conflict, IO, Closed, ...).
using CommitFuture = Future<Status>;

}  // namespace skv

#endif  // SKV_FUTURE_H_
