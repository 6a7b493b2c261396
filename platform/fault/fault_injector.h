// FaultInjector (internal to platform/fault): the policy, the seeded generator and the call
// counts behind one FaultPlatform, shared by every wrapper it hands out. See fault_platform.h for
// the rules.
//
// Thread safety: every method may be called from several threads at once (one mutex, a leaf:
// never held while the target platform runs).

#ifndef SKV_PLATFORM_FAULT_FAULT_INJECTOR_H_
#define SKV_PLATFORM_FAULT_FAULT_INJECTOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "platform/fault/fault_platform.h"
#include "skv/status.h"

namespace skv {

class FaultInjector {
 public:
  // Counts a call of kind `op` on `target` ("<location>/<name>", or "<location>") and returns
  // the error to inject, or OK to let the call through.
  Status check(FaultOp op, std::string_view target);

  void set_policy(FaultPolicy policy);
  uint64_t injected() const;
  uint64_t calls(FaultOp op) const;
  uint64_t calls(FaultOp op, std::string_view target_contains) const;

 private:
  using Counts = std::array<uint64_t, kFaultOpCount>;

  mutable std::mutex mu_;
  FaultPolicy policy_;
  std::vector<uint64_t> seen_;   // per rule: matching calls since set_policy
  std::vector<uint64_t> fired_;  // per rule: faults injected
  uint64_t rng_ = 0;
  Counts calls_{};
  std::map<std::string, Counts, std::less<>> calls_by_target_;
  uint64_t injected_ = 0;
};

}  // namespace skv

#endif  // SKV_PLATFORM_FAULT_FAULT_INJECTOR_H_
