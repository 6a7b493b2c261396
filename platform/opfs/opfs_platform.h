// OpfsPlatform: the Platform of the browser build. Each database is an OPFS slot pool
// (opfs_storage.h); its handles are opened by the JS wrapper, asynchronously, before the tree
// opens, and handed over by a factory. Background work runs on a QueueExecutor (or the executor
// given) that the wrapper drives between calls; the clock is the system clock unless one is given.
//
// open_storage(name, options) asks the factory for the handle table of `name` (the factory
// returns NotFound when the database does not exist and options.create_if_missing is false) and
// recovers the pool; without create_if_missing a pool with no options.marker is NotFound too. A
// database already open through this platform gives Code::Busy; across tabs and workers a Web Lock
// named after the database (taken by the JS wrapper) does the same.
//
// This library does not define default_platform(): the program (the Embind glue, a test) builds
// an OpfsPlatform and passes it to TreeBuilder::with_platform().
//
// Thread safety: meant for one worker thread; open_storage(), storage() and the registry of open
// databases are guarded by a mutex, so native tests may call them from several threads.

#ifndef SKV_PLATFORM_OPFS_OPFS_PLATFORM_H_
#define SKV_PLATFORM_OPFS_OPFS_PLATFORM_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "platform/opfs/opfs_storage.h"
#include "platform/opfs/slot_handles.h"
#include "platform/opfs/slot_pool.h"
#include "skv/platform.h"
#include "skv/queue_executor.h"
#include "skv/status.h"

namespace skv {

// Hands over the handle table of database `name`.
using SlotHandlesFactory = std::function<Result<std::shared_ptr<SlotHandles>>(
    const std::string& name, bool create_if_missing)>;

class OpfsPlatform final : public Platform {
 public:
  // REQUIRES: factory is callable. A null executor means a QueueExecutor of the platform's own;
  // a null clock, the system clock.
  explicit OpfsPlatform(SlotHandlesFactory factory, OpfsOptions options = OpfsOptions(),
                        std::shared_ptr<Executor> executor = nullptr,
                        std::shared_ptr<Clock> clock = nullptr);
  OpfsPlatform(const OpfsPlatform&) = delete;
  OpfsPlatform& operator=(const OpfsPlatform&) = delete;
  ~OpfsPlatform() override;

  // `path` is the database name; location() of the storage is "opfs:<name>".
  Result<std::unique_ptr<Storage>> open_storage(const std::string& path,
                                                const StorageOptions& options) override;
  Clock& clock() override { return *clock_; }
  Executor& executor() override { return *executor_; }

  // The platform's own executor, or null when one was given.
  QueueExecutor* queue_executor() { return queue_executor_; }

  // The open storage of database `name` (for the reserve calls between operations), or null.
  // The pointer is valid until that storage is destroyed (the tree closes).
  OpfsStorage* storage(const std::string& name);

 private:
  struct Registry {
    std::mutex mu;
    std::map<std::string, OpfsStorage*> open;
  };

  const SlotHandlesFactory factory_;
  const OpfsOptions options_;
  std::shared_ptr<Executor> executor_;
  QueueExecutor* queue_executor_ = nullptr;
  std::shared_ptr<Clock> clock_;
  // Shared with every storage, which deregisters itself when destroyed (even after the
  // platform is gone).
  std::shared_ptr<Registry> registry_;
};

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_OPFS_PLATFORM_H_
