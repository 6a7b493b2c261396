#include "platform/opfs/opfs_platform.h"
#include "util/status_macros.h"

#include <chrono>
#include <utility>

namespace skv {

namespace {

class SystemClock final : public Clock {
 public:
  uint64_t now_nanos() override {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  }
};

}  // namespace

OpfsPlatform::OpfsPlatform(SlotHandlesFactory factory, OpfsOptions options,
                           std::shared_ptr<Executor> executor, std::shared_ptr<Clock> clock)
    : factory_(std::move(factory)),
      options_(options),
      executor_(std::move(executor)),
      clock_(std::move(clock)),
      registry_(std::make_shared<Registry>()) {
  if (executor_ == nullptr) {
    auto own = std::make_shared<QueueExecutor>();
    queue_executor_ = own.get();
    executor_ = std::move(own);
  }
  if (clock_ == nullptr) clock_ = std::make_shared<SystemClock>();
}

OpfsPlatform::~OpfsPlatform() = default;

Result<std::unique_ptr<Storage>> OpfsPlatform::open_storage(const std::string& path,
                                                            const StorageOptions& options) {
  const std::string location = "opfs:" + path;
  if (path.empty() || path.find('/') != std::string::npos) {
    return Status::invalid_argument(location + ": invalid database name");
  }
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    if (registry_->open.count(path) != 0) {
      return Status::busy(location + ": the database is already open");
    }
  }
  // Read-only is an ordinary open here (the access handles allow one holder): nothing is
  // created, and the core writes nothing.
  const bool create = (options.create_if_missing || options.create_new) && !options.read_only;
  if (options.create_new) {
    Result<std::shared_ptr<SlotHandles>> existing = factory_(path, false);
    if (existing.ok()) {
      return Status::invalid_argument(location +
                                      ": already exists (a new database needs a name no "
                                      "database has)");
    }
    if (existing.status().code() != Code::NotFound) return existing.status();
  }
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<SlotHandles> handles, factory_(path, create));
  if (handles == nullptr) {
    return Status::io_error(location + ": the slot handle factory returned no handles");
  }
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<OpfsStorage> storage,
                       OpfsStorage::open(path, std::move(handles), options_));
  if (!create && !options.marker.empty()) {
    Result<std::string> marker = storage->read_pointer(options.marker);
    if (marker.status().code() == Code::NotFound) {
      return Status::not_found(location + ": not an skv database (it has no " + options.marker +
                               ")");
    }
  }
  std::lock_guard<std::mutex> lock(registry_->mu);
  if (registry_->open.count(path) != 0) {
    return Status::busy(location + ": the database is already open");
  }
  registry_->open[path] = storage.get();
  std::weak_ptr<Registry> weak = registry_;
  OpfsStorage* raw = storage.get();
  storage->set_on_close([weak, path, raw] {
    if (auto registry = weak.lock()) {
      std::lock_guard<std::mutex> l(registry->mu);
      auto it = registry->open.find(path);
      if (it != registry->open.end() && it->second == raw) registry->open.erase(it);
    }
  });
  return std::unique_ptr<Storage>(std::move(storage));
}

OpfsStorage* OpfsPlatform::storage(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_->mu);
  auto it = registry_->open.find(name);
  return it == registry_->open.end() ? nullptr : it->second;
}

}  // namespace skv
