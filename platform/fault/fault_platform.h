// FaultPlatform: a platform wrapper (skv/platform_wrapper.h) that makes chosen calls fail, over
// any platform: the in-memory one, POSIX directories, the OPFS slot pool. It counts every call it
// forwards, by kind and by file, so a test can also check which calls happened.
//
// A failed call changes nothing: the wrapper fails it before the target sees it, so the file,
// the store and the pointer records stay as they were. Its message names the file the way the
// target's own messages do, "<location>/<name>: injected <op> fault" ("mem:db/000012.wal: ...",
// "/tmp/x/000012.wal: ...", "opfs:db/000012.wal: ..."), or "<location>: ..." for calls that name
// no file (sync_dir, list).
//
// Which calls fail is a FaultPolicy: a list of rules and a seed. The decisions depend only on the
// sequence of calls and the seed, so a single-threaded run (a test, the simulation) replays
// exactly. Calls that are not I/O (name(), size(), close(), abort(), location(), clock(),
// executor()) are neither counted nor failed, and neither is open_storage().
//
// Only what goes through the wrapper is seen: a storage opened on the target directly, or the
// target's own helpers (such as MemoryPlatform::crash()), are neither counted nor failed. A call
// that passes behaves exactly as the target says, errors of its own included.
//
// Thread safety: every method, and every Storage, store, file and reader the wrapper hands out,
// is as safe to share as the target's; the policy and the counts are guarded by one mutex, held
// only while a call is counted, never while the target runs.

#ifndef SKV_PLATFORM_FAULT_FAULT_PLATFORM_H_
#define SKV_PLATFORM_FAULT_FAULT_PLATFORM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skv/platform.h"
#include "skv/platform_wrapper.h"
#include "skv/status.h"

namespace skv {

// The kinds of call a fault can target.
enum class FaultOp : uint8_t {
  Read,          // LogFile::read_at, ObjectReader::read_at, Storage::read_pointer
  Write,         // LogFile::append, LogFile::truncate, ObjectWriter::append
  Sync,          // LogFile::sync, ObjectWriter::finish
  Create,        // LogStore::create, ObjectStore::create
  Open,          // LogStore::open, ObjectStore::open
  Remove,        // LogStore::remove, ObjectStore::remove
  List,          // LogStore::list, ObjectStore::list
  PointerWrite,  // Storage::write_pointer
  SyncDir,       // Storage::sync_dir
};
constexpr size_t kFaultOpCount = 9;

// "read", "write", "sync", "create", "open", "remove", "list", "pointer_write", "sync_dir".
const char* fault_op_name(FaultOp op);

// One rule of a FaultPolicy. A rule counts the calls it matches (its op, and a target containing
// `target_contains`), starting from 1 when the policy is set. Call number k fails when k >= nth,
// fewer than `times` calls failed through this rule so far, and (if one_in > 0) a draw from the
// policy's seeded generator hits 1 in one_in. A failed call changes nothing.
struct FaultRule {
  static constexpr uint64_t kForever = UINT64_MAX;

  FaultOp op = FaultOp::Write;
  uint64_t nth = 1;
  uint64_t times = 1;
  uint64_t one_in = 0;
  Code code = Code::IO;  // Code::Ok is taken as Code::IO
  // Matched against the call's target: "<location>/<name>" for calls on a file or pointer
  // record, "<location>" for sync_dir and list (location() of the Storage: "mem:db",
  // "/tmp/x/db", "opfs:db"). Empty matches everything.
  std::string target_contains;

  // Fails the nth matching call only.
  static FaultRule nth_call(FaultOp op, uint64_t n, Code code = Code::IO) {
    FaultRule r;
    r.op = op;
    r.nth = n;
    r.code = code;
    return r;
  }
  // Fails every matching call.
  static FaultRule every_call(FaultOp op, Code code = Code::IO) {
    FaultRule r;
    r.op = op;
    r.times = kForever;
    r.code = code;
    return r;
  }
};

// Which calls fail. The first rule (in order) that fires decides the error; every rule counts
// every call it matches. Rules with one_in > 0 draw, in call order, from one splitmix64
// generator seeded with `seed`.
struct FaultPolicy {
  std::vector<FaultRule> rules;
  uint64_t seed = 0;
};

class FaultInjector;  // internal

class FaultPlatform final : public PlatformWrapper {
 public:
  // Injects nothing until set_fault_policy(). REQUIRES: target != nullptr.
  explicit FaultPlatform(std::shared_ptr<Platform> target);
  ~FaultPlatform() override;

  // Replaces the policy and restarts its rules' counts (not the call counts below); takes effect
  // for every storage opened through this platform, before or after. clear_faults() removes
  // every rule.
  void set_fault_policy(FaultPolicy policy);
  void clear_faults();

  // Faults injected since construction.
  uint64_t faults_injected() const;
  // Calls of kind `op` made since construction (failed ones included).
  uint64_t call_count(FaultOp op) const;
  // The same, only the calls whose target (see FaultRule::target_contains) contains
  // `target_contains`: call_count(FaultOp::Sync, ".wal") is how many WAL syncs were asked for.
  uint64_t call_count(FaultOp op, std::string_view target_contains) const;

 protected:
  std::unique_ptr<Storage> wrap_storage(std::unique_ptr<Storage> storage) override;

 private:
  const std::shared_ptr<FaultInjector> faults_;
};

}  // namespace skv

#endif  // SKV_PLATFORM_FAULT_FAULT_PLATFORM_H_
