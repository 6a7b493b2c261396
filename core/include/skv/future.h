// Future<T> and Promise<T>: skv's own small one-shot future, used for commit() and flush().
//
// A Promise is completed once, by whichever thread finishes the work; its Future can be polled
// (ready()), waited on (wait(), natively), or given a callback (on_ready()). Unlike std::future it
// works in single-threaded WebAssembly, where nothing may block: there the JS wrapper attaches a
// callback and resolves a Promise from it.
//
// Thread safety: all members are safe to call from several threads. Future and Promise are
// copyable handles to one shared state.

#ifndef SKV_FUTURE_H_
#define SKV_FUTURE_H_

#include <cassert>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "skv/status.h"

namespace skv {

namespace detail {
template <typename T>
struct FutureState {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<T> value;
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
    return f;
  }

  Future() : state_(std::make_shared<detail::FutureState<T>>()) {}

  bool ready() const {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->value.has_value();
  }

  // Blocks until the value is set, then returns it. The reference lives as long as any handle.
  // REQUIRES: another thread completes the promise, or it is already complete. In single-threaded
  // builds only call this when ready() is true.
  const T& wait() const {
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

  // Completes the future. Later calls are ignored (the first value wins).
  void set(T value) const {
    auto& st = *future_.state_;
    std::vector<std::function<void(const T&)>> cbs;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      if (st.value.has_value()) return;
      st.value.emplace(std::move(value));
      cbs.swap(st.callbacks);
    }
    st.cv.notify_all();
    for (auto& cb : cbs) cb(*st.value);
  }

 private:
  Future<T> future_;
};

// The result of Transaction::commit(): OK once the commit is visible (and durable, when its
// durability asked for that), or the reason it failed (Conflict, IO, Closed, ...).
using CommitFuture = Future<Status>;

}  // namespace skv

#endif  // SKV_FUTURE_H_
