// OpfsStorage: the Storage (skv/platform.h) of one database kept in an OPFS slot pool.
//
// Log files, objects and pointer records live in the slots of a SlotPool (slot_pool.h, which
// states the durability model, recovery and the reserve). location() is "opfs:<name>" and every
// message names the slot and the logical file. sync_dir() flushes the slots whose header changed
// since the last flush (new names not yet synced, removals); it is a no-op when there are none.
//
// Between calls the JS wrapper keeps the reserve topped up: when needs_more_slots() is true it
// opens slots_wanted() new handles (asynchronously), appends them to the handle table and calls
// add_slots(). A create that finds the pool empty fails with Code::Quota ("slot pool exhausted")
// without writing anything.
//
// Destroying the storage writes out buffered bytes, flushes pending header changes and closes
// the pool; files still open then fail with Code::IO.
//
// Thread safety: meant for the single worker thread that owns the handles; the pool serializes
// every call with one mutex, so it also honours platform.h's contract natively.

#ifndef SKV_PLATFORM_OPFS_OPFS_STORAGE_H_
#define SKV_PLATFORM_OPFS_OPFS_STORAGE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/opfs/slot_handles.h"
#include "platform/opfs/slot_pool.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

class OpfsStorage final : public Storage {
 public:
  // Recovers the pool of database `name` from `handles` (see SlotPool::open for the errors).
  static Result<std::unique_ptr<OpfsStorage>> open(const std::string& name,
                                                   std::shared_ptr<SlotHandles> handles,
                                                   const OpfsOptions& options = OpfsOptions());
  ~OpfsStorage() override;

  const std::string& location() const override { return pool_->location(); }
  LogStore& logs() override { return *logs_; }
  ObjectStore& objects() override { return *objects_; }
  Status sync_dir() override { return pool_->sync_names(); }
  Status write_pointer(const std::string& name, std::string_view contents) override {
    return pool_->write_pointer(name, contents);
  }
  Result<std::string> read_pointer(const std::string& name) override {
    return pool_->read_pointer(name);
  }

  // The reserve and the pool's health (see SlotPool).
  size_t free_slots() { return pool_->free_slots(); }
  bool needs_more_slots() { return pool_->needs_more_slots(); }
  size_t slots_wanted() { return pool_->slots_wanted(); }
  Status add_slots(size_t n) { return pool_->add_slots(n); }
  SlotPoolStats stats() { return pool_->stats(); }
  std::vector<Status> damaged_slots() { return pool_->damaged_slots(); }
  Status release_damaged_slot(size_t slot) { return pool_->release_damaged_slot(slot); }

  SlotPool& pool() { return *pool_; }

  // Runs `fn` when the storage is destroyed, after the pool is closed (the platform uses it to
  // release the database's lock).
  void set_on_close(std::function<void()> fn) { on_close_ = std::move(fn); }

 private:
  explicit OpfsStorage(std::shared_ptr<SlotPool> pool);

  std::shared_ptr<SlotPool> pool_;
  std::unique_ptr<LogStore> logs_;
  std::unique_ptr<ObjectStore> objects_;
  std::function<void()> on_close_;
};

// The stores over a pool (defined in opfs_files.cpp).
std::unique_ptr<LogStore> make_opfs_log_store(std::shared_ptr<SlotPool> pool);
std::unique_ptr<ObjectStore> make_opfs_object_store(std::shared_ptr<SlotPool> pool);

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_OPFS_STORAGE_H_
