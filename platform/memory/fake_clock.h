// FakeClock: a Clock for tests and deterministic simulation.
//
// It starts at a fixed instant (2024-01-01T00:00:00Z unless told otherwise) and moves only when
// asked: each now_nanos() call returns the current time and then advances it by `step`
// nanoseconds (1 by default), so two calls never return the same value and runs replay exactly.
//
// Thread safety: every method may be called from several threads at once.

#ifndef SKV_PLATFORM_MEMORY_FAKE_CLOCK_H_
#define SKV_PLATFORM_MEMORY_FAKE_CLOCK_H_

#include <atomic>
#include <cstdint>

#include "skv/platform.h"

namespace skv {

class FakeClock final : public Clock {
 public:
  // 2024-01-01T00:00:00Z in nanoseconds since the Unix epoch.
  static constexpr uint64_t kDefaultStart = 1'704'067'200'000'000'000ull;

  explicit FakeClock(uint64_t start_nanos = kDefaultStart, uint64_t step = 1)
      : now_(start_nanos), step_(step) {}

  // Returns the current time, then advances it by the step.
  uint64_t now_nanos() override { return now_.fetch_add(step_, std::memory_order_relaxed); }

  // The current time, without advancing it.
  uint64_t peek_nanos() const { return now_.load(std::memory_order_relaxed); }
  void set_nanos(uint64_t nanos) { now_.store(nanos, std::memory_order_relaxed); }
  void advance(uint64_t nanos) { now_.fetch_add(nanos, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> now_;
  const uint64_t step_;
};

}  // namespace skv

#endif  // SKV_PLATFORM_MEMORY_FAKE_CLOCK_H_
