// StripedPtr<T>: a published std::shared_ptr<const T> that many threads copy at once.
//
// One pointer behind one mutex makes every reader meet every other on that lock. Here the
// pointer is kept once per stripe, each stripe with its own lock on its own cache line; load()
// copies the calling thread's stripe (util/thread_stripe.h), store() writes every stripe in turn.
// A load() that begins after a store() returned sees that value or a later one; a load() that
// overlaps a store() sees the old value or the new.
//
// Thread safety: load() and store() may be called from many threads at once.

#ifndef SKV_UTIL_STRIPED_PTR_H_
#define SKV_UTIL_STRIPED_PTR_H_

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>

#include "util/thread_stripe.h"

namespace skv {

template <typename T>
class StripedPtr {
 public:
  static constexpr size_t kStripes = 16;

  std::shared_ptr<const T> load() const {
    const Stripe& s = stripes_[thread_stripe(kStripes)];
    std::lock_guard<std::mutex> lock(s.mu);
    return s.ptr;
  }

  // Publishes `p` (null to withdraw); the old value is released outside the stripes' locks.
  void store(const std::shared_ptr<const T>& p) {
    for (Stripe& s : stripes_) {
      std::shared_ptr<const T> old;
      {
        std::lock_guard<std::mutex> lock(s.mu);
        old = std::move(s.ptr);
        s.ptr = p;
      }
    }
  }

 private:
  struct alignas(64) Stripe {
    mutable std::mutex mu;
    std::shared_ptr<const T> ptr;  // guarded by mu
  };
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace skv

#endif  // SKV_UTIL_STRIPED_PTR_H_
