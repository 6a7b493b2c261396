// thread_stripe(): spreads threads over the stripes of a striped structure (a lock and what it
// guards, one per stripe, so threads that touch different stripes never meet on a lock or a cache
// line). Each thread takes the next index of a process-wide counter the first time it asks, so
// N threads use N different stripes as long as there are at least N of them.
//
// Thread safety: any thread may call it; the answer for one thread never changes.

#ifndef SKV_UTIL_THREAD_STRIPE_H_
#define SKV_UTIL_THREAD_STRIPE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace skv {

// The calling thread's stripe among `stripes`. REQUIRES: stripes > 0.
inline size_t thread_stripe(size_t stripes) {
  static std::atomic<size_t> next{0};
  // Constant-initialized, so reading it needs no guard; SIZE_MAX until the thread first asks.
  thread_local size_t mine = SIZE_MAX;
  if (mine == SIZE_MAX) mine = next.fetch_add(1, std::memory_order_relaxed) % 4096;
  return mine % stripes;
}

}  // namespace skv

#endif  // SKV_UTIL_THREAD_STRIPE_H_
