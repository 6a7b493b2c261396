// A counting global allocator for tests that bound memory: linking the module "counting_alloc"
// replaces every form of the global operator new and delete with versions that count the bytes
// requested. It counts what the program asks for (malloc's own overhead is not included), in
// every thread, deterministically: a test reads the counters before and after the work it
// measures, not seconds or the process's resident size.
//
// Thread safety: the counters are atomics; every function may be called from any thread.

#ifndef SKV_TESTS_SUPPORT_COUNTING_ALLOC_COUNTING_ALLOC_H_
#define SKV_TESTS_SUPPORT_COUNTING_ALLOC_COUNTING_ALLOC_H_

#include <cstddef>
#include <cstdint>

namespace skv::testing {

struct AllocationCounts {
  size_t live_bytes = 0;         // requested by allocations not yet freed
  size_t peak_live_bytes = 0;    // the most live_bytes was since the last reset_peak()
  uint64_t allocated_bytes = 0;  // requested by every allocation so far
  uint64_t allocations = 0;      // allocations so far
};

AllocationCounts allocation_counts();
// Starts a new peak measurement: peak_live_bytes becomes the current live_bytes.
void reset_peak();

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_COUNTING_ALLOC_COUNTING_ALLOC_H_
