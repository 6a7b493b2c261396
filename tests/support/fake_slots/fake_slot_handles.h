// FakeSlotDisk: an in-memory stand-in for the OPFS files behind a SlotHandles table, for the
// native tests of the OPFS platform (a test double: built only with the tests, as the module
// "fake_slots"). It models what the browser cannot show us on demand:
//
//   - Durability: every write and truncate is pending until flush() of its slot. crash() is a
//     power loss: each slot keeps its flushed bytes plus a seeded choice of its pending calls
//     (a prefix of them, or with `reorder` any subset in order), and with `tear` the first call
//     it drops may still land in part (a prefix of its bytes; half the time a prefix shorter
//     than 64 bytes, to hit the fields of slot headers). terminate() is a killed worker:
//     every byte written survives (the OS has it), only the handles die.
//   - Handles: handles() returns a table valid until the next crash() or terminate(); later
//     calls on it fail with "InvalidStateError", as a closed FileSystemSyncAccessHandle does.
//   - Errors: inject() makes chosen calls fail with a DOMException name; set_quota() caps the
//     total bytes, and a call that would grow past it fails with "QuotaExceededError" and
//     changes nothing.
//   - Capacity: add_slots() appends empty slot files; every live table sees them (as the JS shim
//     appends handles).
//
// Thread safety: every method (and every call on a table it hands out) takes one mutex.

#ifndef SKV_TESTS_SUPPORT_FAKE_SLOTS_FAKE_SLOT_HANDLES_H_
#define SKV_TESTS_SUPPORT_FAKE_SLOTS_FAKE_SLOT_HANDLES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "platform/opfs/slot_handles.h"

namespace skv {

class FakeSlotDisk {
 public:
  static constexpr uint64_t kNoQuota = UINT64_MAX;

  enum class Op : uint8_t { Read, Write, Truncate, Size, Flush };
  static constexpr size_t kOpCount = 5;

  // Fails matching calls: call number k (counted from 1 when the fault is injected) of `op` on
  // `slot` (-1: any slot) fails when k >= nth, at most `times` times.
  struct Fault {
    Op op = Op::Write;
    int slot = -1;
    uint64_t nth = 1;
    uint64_t times = 1;
    std::string error_name = "NotReadableError";
  };

  struct CrashOptions {
    uint64_t seed = 0;
    bool tear = false;      // a dropped write may land in part (with reorder: any of them)
    bool reorder = false;   // pending calls survive as any subset, not only a prefix
    bool lose_all = false;  // no pending call lands (tear still applies to the first one)
  };

  explicit FakeSlotDisk(size_t slots = 0);
  FakeSlotDisk(const FakeSlotDisk&) = delete;
  FakeSlotDisk& operator=(const FakeSlotDisk&) = delete;
  ~FakeSlotDisk();

  // A handle table over every slot, valid until the next crash() or terminate().
  std::shared_ptr<SlotHandles> handles();

  void add_slots(size_t n);
  size_t slot_count() const;

  void crash(const CrashOptions& options);
  void terminate();

  void inject(Fault fault);
  void clear_faults();
  void set_quota(uint64_t bytes);

  // Calls of `op` made through any table since construction (failed ones included).
  uint64_t calls(Op op) const;
  // Writes and truncates of `slot` not yet flushed.
  size_t pending_calls(size_t slot) const;

  // The current bytes of a slot file (pending calls included) and its durable bytes.
  std::string bytes(size_t slot) const;
  std::string durable_bytes(size_t slot) const;
  uint64_t total_bytes() const;
  // Damages a slot durably, as a bad disk would: overwrites bytes (growing the file if needed),
  // or XORs one byte with `mask` (REQUIRES: offset < size).
  void overwrite(size_t slot, uint64_t offset, std::string_view bytes);
  void flip(size_t slot, uint64_t offset, uint8_t mask = 0x01);

 private:
  friend class FakeSlotTable;
  struct Pending {
    bool truncate = false;
    uint64_t offset = 0;  // write offset, or the new size of a truncate
    std::string bytes;
  };
  struct File {
    std::string data;
    std::string durable;
    std::vector<Pending> pending;
  };
  struct State {
    mutable std::mutex mu;
    std::vector<File> files;
    uint64_t epoch = 0;
    uint64_t quota = kNoQuota;
    std::vector<Fault> faults;
    std::vector<uint64_t> seen;   // per fault: matching calls
    std::vector<uint64_t> fired;  // per fault: failures injected
    std::array<uint64_t, kOpCount> calls{};
  };

  std::shared_ptr<State> state_;
};

}  // namespace skv

#endif  // SKV_TESTS_SUPPORT_FAKE_SLOTS_FAKE_SLOT_HANDLES_H_
