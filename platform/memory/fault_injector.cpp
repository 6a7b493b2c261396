// The fault injector of the in-memory platform: counts calls and decides, rule by rule, which of
// them fail. See FaultRule in memory_platform.h for the rules.

#include <string>
#include <utility>

#include "platform/memory/memory_state.h"

namespace skv {

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

Status MemoryFaultInjector::check(FaultOp op, const MemoryDatabase& db, std::string_view name) {
  std::string target = db.path;
  if (!name.empty()) {
    target += '/';
    target.append(name);
  }

  std::lock_guard<std::mutex> lock(mu_);
  size_t index = static_cast<size_t>(op);
  if (index < calls_.size()) ++calls_[index];

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
    if (rule.one_in > 0 && memory_next_random(&rng_) % rule.one_in != 0) continue;
    ++fired_[i];
    decided = &rule;
  }
  if (decided == nullptr) return Status::OK();

  ++injected_;
  Code code = decided->code == Code::Ok ? Code::IO : decided->code;
  std::string label = name.empty() ? db.location : db.label(name);
  return Status(code, label + ": injected " + fault_op_name(op) + " fault");
}

void MemoryFaultInjector::set_policy(FaultPolicy policy) {
  std::lock_guard<std::mutex> lock(mu_);
  policy_ = std::move(policy);
  seen_.assign(policy_.rules.size(), 0);
  fired_.assign(policy_.rules.size(), 0);
  rng_ = policy_.seed;
}

uint64_t MemoryFaultInjector::injected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return injected_;
}

uint64_t MemoryFaultInjector::calls(FaultOp op) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t index = static_cast<size_t>(op);
  return index < calls_.size() ? calls_[index] : 0;
}

}  // namespace skv
