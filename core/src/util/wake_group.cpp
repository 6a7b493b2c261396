// WakeGroup (skv/future.h): many waiters, one word, one wake-up call.
//
// The protocol: a completer sets its future's `done`, then calls wake_all(), which bumps the word
// and, if anyone may sleep, wakes every sleeper. A waiter reads the word, checks `done`, counts
// itself as a sleeper and sleeps only while the word still holds what it read. Either the
// completer sees the sleeper count (and wakes it), or the waiter sees `done` or a changed word
// (and does not sleep): all the atomics involved are sequentially consistent.

#include <climits>

#include "skv/future.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace skv {

#if defined(__linux__)

namespace {

// The futex word is the uint32_t inside the atomic (std::atomic<uint32_t> is lock-free and has
// its size and alignment on every Linux target).
uint32_t* futex_address(std::atomic<uint32_t>* word) { return reinterpret_cast<uint32_t*>(word); }

}  // namespace

void WakeGroup::wait_until(const std::atomic<bool>& done) {
  while (!done.load()) {
    uint32_t seen = word_.load();
    sleepers_.fetch_add(1);
    if (!done.load()) {
      // Returns at once if the word moved on since `seen`; a spurious return just loops.
      syscall(SYS_futex, futex_address(&word_), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
    }
    sleepers_.fetch_sub(1);
  }
}

void WakeGroup::wake_all() {
  word_.fetch_add(1);
  if (sleepers_.load() != 0) {
    syscall(SYS_futex, futex_address(&word_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
  }
}

#else

void WakeGroup::wait_until(const std::atomic<bool>& done) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done.load(); });
}

void WakeGroup::wake_all() {
  { std::lock_guard<std::mutex> lock(mu_); }  // a waiter between its check and its sleep finishes
  cv_.notify_all();
}

#endif

}  // namespace skv
