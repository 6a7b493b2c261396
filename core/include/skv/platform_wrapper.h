// Forwarding base classes for the platform interface (platform.h): each holds a target object of
// the same interface and passes every call to it unchanged, so a wrapper overrides only the calls
// it changes (counting, failing, delaying or recording them) and works over any platform.
//
// A wrapper sees only the objects it is handed, so it wraps the ones it wants to see where they
// are made:
//   - PlatformWrapper::open_storage() passes each Storage it opens through wrap_storage();
//   - a StorageWrapper that wants to see store calls holds its own LogStoreWrapper or
//     ObjectStoreWrapper over target().logs() / target().objects() and returns it from logs() /
//     objects();
//   - LogStoreWrapper::create() and open() pass each LogFile through wrap_file(), and
//     ObjectStoreWrapper passes each writer through wrap_writer() and each reader through
//     wrap_reader().
// So a wrapper that wants to see LogFile::sync() overrides wrap_file() in a LogStoreWrapper,
// holds that store in a StorageWrapper, and returns the StorageWrapper from
// PlatformWrapper::wrap_storage(). The hooks see only successful results; errors pass through.
// Clock, Executor and MemoryBlocks have no wrapper class: a PlatformWrapper that wants another
// clock, executor or memory source overrides clock(), executor() or memory_blocks() and returns
// its own.
//
// Thread safety: a wrapper adds no state of its own, so it is exactly as safe to share as its
// target (see platform.h). A subclass that adds state must keep the rule of the interface it
// implements: Storage, LogStore, ObjectStore and Platform are called from several threads at once.
//
// Ownership: a PlatformWrapper shares ownership of its target platform; a StorageWrapper owns its
// target Storage; a LogStoreWrapper or ObjectStoreWrapper borrows its target store, which belongs
// to a Storage that must outlive it (hold the store wrapper inside the StorageWrapper of that
// Storage); a file, writer or reader wrapper owns its target. None of them is copyable.

#ifndef SKV_PLATFORM_WRAPPER_H_
#define SKV_PLATFORM_WRAPPER_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

// Forwards every LogFile call to the file it owns.
class LogFileWrapper : public LogFile {
 public:
  // REQUIRES: target != nullptr.
  explicit LogFileWrapper(std::unique_ptr<LogFile> target) : target_(std::move(target)) {
    assert(target_ != nullptr);
  }

  const std::string& name() const override { return target_->name(); }
  Status append(std::string_view data) override { return target_->append(data); }
  Status sync() override { return target_->sync(); }
  uint64_t size() const override { return target_->size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    return target_->read_at(offset, n, scratch, result);
  }
  Status truncate(uint64_t size) override { return target_->truncate(size); }
  Status reserve(uint64_t bytes) override { return target_->reserve(bytes); }
  Status close() override { return target_->close(); }

  LogFile& target() const { return *target_; }

 private:
  const std::unique_ptr<LogFile> target_;
};

// Forwards every LogStore call to a store it borrows. create() and open() pass the files they
// return through wrap_file().
class LogStoreWrapper : public LogStore {
 public:
  // REQUIRES: target != nullptr and outlives this wrapper.
  explicit LogStoreWrapper(LogStore* target) : target_(target) { assert(target_ != nullptr); }
  LogStoreWrapper(const LogStoreWrapper&) = delete;
  LogStoreWrapper& operator=(const LogStoreWrapper&) = delete;

  Result<std::unique_ptr<LogFile>> create(const std::string& name) override {
    return wrap_result(name, target_->create(name));
  }
  Result<std::unique_ptr<LogFile>> open(const std::string& name) override {
    return wrap_result(name, target_->open(name));
  }
  Status remove(const std::string& name) override { return target_->remove(name); }
  Result<std::vector<std::string>> list() override { return target_->list(); }

  LogStore& target() const { return *target_; }

 protected:
  // Called with every file create() or open() returns, and the name it was asked for; returns
  // what the caller gets. The default returns `file` itself. May be called from several threads
  // at once.
  virtual std::unique_ptr<LogFile> wrap_file(const std::string& name,
                                             std::unique_ptr<LogFile> file) {
    return file;
  }

 private:
  Result<std::unique_ptr<LogFile>> wrap_result(const std::string& name,
                                               Result<std::unique_ptr<LogFile>> r) {
    if (!r.ok()) return r;
    return wrap_file(name, std::move(r).value());
  }

  LogStore* const target_;
};

// Forwards every ObjectWriter call to the writer it owns. A wrapper destroyed without finish()
// or abort() destroys its target, which aborts.
class ObjectWriterWrapper : public ObjectWriter {
 public:
  // REQUIRES: target != nullptr.
  explicit ObjectWriterWrapper(std::unique_ptr<ObjectWriter> target) : target_(std::move(target)) {
    assert(target_ != nullptr);
  }

  Status append(std::string_view data) override { return target_->append(data); }
  uint64_t size() const override { return target_->size(); }
  Status finish() override { return target_->finish(); }
  void abort() override { target_->abort(); }

  ObjectWriter& target() const { return *target_; }

 private:
  const std::unique_ptr<ObjectWriter> target_;
};

// Forwards every ObjectReader call to the reader it owns.
class ObjectReaderWrapper : public ObjectReader {
 public:
  // REQUIRES: target != nullptr.
  explicit ObjectReaderWrapper(std::unique_ptr<ObjectReader> target) : target_(std::move(target)) {
    assert(target_ != nullptr);
  }

  const std::string& name() const override { return target_->name(); }
  uint64_t size() const override { return target_->size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    return target_->read_at(offset, n, scratch, result);
  }

  ObjectReader& target() const { return *target_; }

 private:
  const std::unique_ptr<ObjectReader> target_;
};

// Forwards every ObjectStore call to a store it borrows. create() passes the writers it returns
// through wrap_writer(), open() the readers through wrap_reader().
class ObjectStoreWrapper : public ObjectStore {
 public:
  // REQUIRES: target != nullptr and outlives this wrapper.
  explicit ObjectStoreWrapper(ObjectStore* target) : target_(target) { assert(target_ != nullptr); }
  ObjectStoreWrapper(const ObjectStoreWrapper&) = delete;
  ObjectStoreWrapper& operator=(const ObjectStoreWrapper&) = delete;

  Result<std::unique_ptr<ObjectWriter>> create(const std::string& name) override {
    Result<std::unique_ptr<ObjectWriter>> r = target_->create(name);
    if (!r.ok()) return r;
    return wrap_writer(name, std::move(r).value());
  }
  Result<std::unique_ptr<ObjectReader>> open(const std::string& name) override {
    Result<std::unique_ptr<ObjectReader>> r = target_->open(name);
    if (!r.ok()) return r;
    return wrap_reader(name, std::move(r).value());
  }
  Status remove(const std::string& name) override { return target_->remove(name); }
  Result<std::vector<std::string>> list() override { return target_->list(); }

  ObjectStore& target() const { return *target_; }

 protected:
  // Called with every writer create() returns and every reader open() returns, and the name it
  // was asked for (an ObjectWriter has no name() of its own); the defaults return the writer or
  // reader itself. May be called from several threads at once.
  virtual std::unique_ptr<ObjectWriter> wrap_writer(const std::string& name,
                                                    std::unique_ptr<ObjectWriter> writer) {
    return writer;
  }
  virtual std::unique_ptr<ObjectReader> wrap_reader(const std::string& name,
                                                    std::unique_ptr<ObjectReader> reader) {
    return reader;
  }

 private:
  ObjectStore* const target_;
};

// Forwards every Storage call to the storage it owns; logs() and objects() return the target's
// own stores. Destroying the wrapper destroys the target, which releases the database's lock.
class StorageWrapper : public Storage {
 public:
  // REQUIRES: target != nullptr.
  explicit StorageWrapper(std::unique_ptr<Storage> target) : target_(std::move(target)) {
    assert(target_ != nullptr);
  }

  const std::string& location() const override { return target_->location(); }
  LogStore& logs() override { return target_->logs(); }
  ObjectStore& objects() override { return target_->objects(); }
  Status sync_dir() override { return target_->sync_dir(); }
  Status write_pointer(const std::string& name, std::string_view contents) override {
    return target_->write_pointer(name, contents);
  }
  Result<std::string> read_pointer(const std::string& name) override {
    return target_->read_pointer(name);
  }
  // A wrapped `source` is unwrapped, so two wrapped storages of one platform still link.
  Status link_from(Storage& source, const std::string& name) override {
    auto* wrapped = dynamic_cast<StorageWrapper*>(&source);
    return target_->link_from(wrapped != nullptr ? wrapped->target() : source, name);
  }

  Storage& target() const { return *target_; }

 private:
  const std::unique_ptr<Storage> target_;
};

// Forwards every Platform call to a platform it shares ownership of. open_storage() passes each
// Storage it opens through wrap_storage().
class PlatformWrapper : public Platform {
 public:
  // REQUIRES: target != nullptr.
  explicit PlatformWrapper(std::shared_ptr<Platform> target) : target_(std::move(target)) {
    assert(target_ != nullptr);
  }
  PlatformWrapper(const PlatformWrapper&) = delete;
  PlatformWrapper& operator=(const PlatformWrapper&) = delete;

  Result<std::unique_ptr<Storage>> open_storage(const std::string& path,
                                                const StorageOptions& options) override {
    Result<std::unique_ptr<Storage>> r = target_->open_storage(path, options);
    if (!r.ok()) return r;
    return wrap_storage(std::move(r).value());
  }
  Clock& clock() override { return target_->clock(); }
  Executor& executor() override { return target_->executor(); }
  std::shared_ptr<MemoryBlocks> memory_blocks() override { return target_->memory_blocks(); }

  Platform& target() const { return *target_; }

 protected:
  // Called with every Storage open_storage() opens; returns what the caller gets. The default
  // returns `storage` itself. May be called from several threads at once.
  virtual std::unique_ptr<Storage> wrap_storage(std::unique_ptr<Storage> storage) {
    return storage;
  }

 private:
  const std::shared_ptr<Platform> target_;
};

}  // namespace skv

#endif  // SKV_PLATFORM_WRAPPER_H_
