// The fault injector: counts calls and decides, rule by rule, which of them fail.

#include "platform/fault/fault_injector.h"
#include "util/random.h"

#include <string>
#include <utility>

namespace skv {

namespace {}  // namespace

const char* fault_op_name(FaultOp op) {
  switch (op) {
    case FaultOp::Read:
      return "read";
    case FaultOp::Write:
      return "write";
    case FaultOp::Sync:
      return "sync";
    case FaultOp::Create:
      return "create";
    case FaultOp::Open:
      return "open";
    case FaultOp::Remove:
      return "remove";
    case FaultOp::List:
      return "list";
    case FaultOp::PointerWrite:
      return "pointer_write";
    case FaultOp::SyncDir:
      return "sync_dir";
  }
  return "unknown";
}

Status FaultInjector::check(FaultOp op, std::string_view target) {
  const size_t index = static_cast<size_t>(op);
  std::lock_guard<std::mutex> lock(mu_);
  if (index < calls_.size()) {
    ++calls_[index];
    auto it = calls_by_target_.find(target);
    if (it == calls_by_target_.end()) it = calls_by_target_.emplace(target, Counts{}).first;
    ++it->second[index];
  }

  const FaultRule* decided = nullptr;
  for (size_t i = 0; i < policy_.rules.size(); ++i) {
    const FaultRule& rule = policy_.rules[i];
    if (rule.op != op) continue;
    if (!rule.target_contains.empty() && target.find(rule.target_contains) == std::string::npos) {
      continue;
    }
    ++seen_[i];
    // Once a rule has decided, later rules only count the call: they neither draw nor fire.
    if (decided != nullptr) continue;
    if (seen_[i] < rule.nth || fired_[i] >= rule.times) continue;
    if (rule.one_in > 0 && splitmix64_next(&rng_) % rule.one_in != 0) continue;
    ++fired_[i];
    decided = &rule;
  }
  if (decided == nullptr) return Status::OK();

  ++injected_;
  const Code code = decided->code == Code::Ok ? Code::IO : decided->code;
  return Status(code, std::string(target) + ": injected " + fault_op_name(op) + " fault");
}

void FaultInjector::set_policy(FaultPolicy policy) {
  std::lock_guard<std::mutex> lock(mu_);
  policy_ = std::move(policy);
  seen_.assign(policy_.rules.size(), 0);
  fired_.assign(policy_.rules.size(), 0);
  rng_ = policy_.seed;
}

uint64_t FaultInjector::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

uint64_t FaultInjector::calls(FaultOp op) const {
  const size_t index = static_cast<size_t>(op);
  std::lock_guard<std::mutex> lock(mu_);
  return index < calls_.size() ? calls_[index] : 0;
}

uint64_t FaultInjector::calls(FaultOp op, std::string_view target_contains) const {
  const size_t index = static_cast<size_t>(op);
  if (index >= kFaultOpCount) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const auto& [target, counts] : calls_by_target_) {
    if (target.find(target_contains) != std::string::npos) n += counts[index];
  }
  return n;
}

}  // namespace skv
