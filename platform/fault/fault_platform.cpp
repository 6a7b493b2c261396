// FaultPlatform and the wrappers it hands out: each I/O call asks the injector first and reaches
// the target only when no fault fires.

#include "platform/fault/fault_platform.h"

#include <utility>

#include "platform/fault/fault_injector.h"
#include "util/status_macros.h"

namespace skv {

namespace {

using Injector = std::shared_ptr<FaultInjector>;

std::string file_target(const std::string& location, std::string_view name) {
  std::string target = location;
  target += '/';
  target.append(name);
  return target;
}

class FaultLogFile final : public LogFileWrapper {
 public:
  FaultLogFile(std::unique_ptr<LogFile> file, Injector faults, std::string target)
      : LogFileWrapper(std::move(file)), faults_(std::move(faults)), target_(std::move(target)) {}

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Write, target_));
    return LogFileWrapper::append(data);
  }
  Status sync() override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Sync, target_));
    return LogFileWrapper::sync();
  }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Read, target_));
    return LogFileWrapper::read_at(offset, n, scratch, result);
  }
  Status truncate(uint64_t size) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Write, target_));
    return LogFileWrapper::truncate(size);
  }

 private:
  const Injector faults_;
  const std::string target_;
};

class FaultObjectWriter final : public ObjectWriterWrapper {
 public:
  FaultObjectWriter(std::unique_ptr<ObjectWriter> writer, Injector faults, std::string target)
      : ObjectWriterWrapper(std::move(writer)),
        faults_(std::move(faults)),
        target_(std::move(target)) {}

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Write, target_));
    return ObjectWriterWrapper::append(data);
  }
  Status finish() override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Sync, target_));
    return ObjectWriterWrapper::finish();
  }

 private:
  const Injector faults_;
  const std::string target_;
};

class FaultObjectReader final : public ObjectReaderWrapper {
 public:
  FaultObjectReader(std::unique_ptr<ObjectReader> reader, Injector faults, std::string target)
      : ObjectReaderWrapper(std::move(reader)),
        faults_(std::move(faults)),
        target_(std::move(target)) {}

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Read, target_));
    return ObjectReaderWrapper::read_at(offset, n, scratch, result);
  }

 private:
  const Injector faults_;
  const std::string target_;
};

class FaultLogStore final : public LogStoreWrapper {
 public:
  FaultLogStore(LogStore* store, Injector faults, std::string location)
      : LogStoreWrapper(store), faults_(std::move(faults)), location_(std::move(location)) {}

  Result<std::unique_ptr<LogFile>> create(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Create, file_target(location_, name)));
    return LogStoreWrapper::create(name);
  }
  Result<std::unique_ptr<LogFile>> open(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Open, file_target(location_, name)));
    return LogStoreWrapper::open(name);
  }
  Status remove(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Remove, file_target(location_, name)));
    return LogStoreWrapper::remove(name);
  }
  Result<std::vector<std::string>> list() override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::List, location_));
    return LogStoreWrapper::list();
  }

 protected:
  std::unique_ptr<LogFile> wrap_file(const std::string& name,
                                     std::unique_ptr<LogFile> file) override {
    return std::make_unique<FaultLogFile>(std::move(file), faults_, file_target(location_, name));
  }

 private:
  const Injector faults_;
  const std::string location_;
};

class FaultObjectStore final : public ObjectStoreWrapper {
 public:
  FaultObjectStore(ObjectStore* store, Injector faults, std::string location)
      : ObjectStoreWrapper(store), faults_(std::move(faults)), location_(std::move(location)) {}

  Result<std::unique_ptr<ObjectWriter>> create(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Create, file_target(location_, name)));
    return ObjectStoreWrapper::create(name);
  }
  Result<std::unique_ptr<ObjectReader>> open(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Open, file_target(location_, name)));
    return ObjectStoreWrapper::open(name);
  }
  Status remove(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Remove, file_target(location_, name)));
    return ObjectStoreWrapper::remove(name);
  }
  Result<std::vector<std::string>> list() override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::List, location_));
    return ObjectStoreWrapper::list();
  }

 protected:
  std::unique_ptr<ObjectWriter> wrap_writer(const std::string& name,
                                            std::unique_ptr<ObjectWriter> writer) override {
    return std::make_unique<FaultObjectWriter>(std::move(writer), faults_,
                                               file_target(location_, name));
  }
  std::unique_ptr<ObjectReader> wrap_reader(const std::string& name,
                                            std::unique_ptr<ObjectReader> reader) override {
    return std::make_unique<FaultObjectReader>(std::move(reader), faults_,
                                               file_target(location_, name));
  }

 private:
  const Injector faults_;
  const std::string location_;
};

class FaultStorage final : public StorageWrapper {
 public:
  FaultStorage(std::unique_ptr<Storage> storage, Injector faults)
      : StorageWrapper(std::move(storage)),
        faults_(std::move(faults)),
        logs_(&target().logs(), faults_, location()),
        objects_(&target().objects(), faults_, location()) {}

  LogStore& logs() override { return logs_; }
  ObjectStore& objects() override { return objects_; }

  Status sync_dir() override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::SyncDir, location()));
    return StorageWrapper::sync_dir();
  }
  Status write_pointer(const std::string& name, std::string_view contents) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::PointerWrite, file_target(location(), name)));
    return StorageWrapper::write_pointer(name, contents);
  }
  Result<std::string> read_pointer(const std::string& name) override {
    SKV_RETURN_IF_ERROR(faults_->check(FaultOp::Read, file_target(location(), name)));
    return StorageWrapper::read_pointer(name);
  }

 private:
  const Injector faults_;
  FaultLogStore logs_;
  FaultObjectStore objects_;
};

}  // namespace

FaultPlatform::FaultPlatform(std::shared_ptr<Platform> target)
    : PlatformWrapper(std::move(target)), faults_(std::make_shared<FaultInjector>()) {}

FaultPlatform::~FaultPlatform() = default;

void FaultPlatform::set_fault_policy(FaultPolicy policy) { faults_->set_policy(std::move(policy)); }

void FaultPlatform::clear_faults() { faults_->set_policy(FaultPolicy{}); }

uint64_t FaultPlatform::faults_injected() const { return faults_->injected(); }

uint64_t FaultPlatform::call_count(FaultOp op) const { return faults_->calls(op); }

uint64_t FaultPlatform::call_count(FaultOp op, std::string_view target_contains) const {
  return faults_->calls(op, target_contains);
}

std::unique_ptr<Storage> FaultPlatform::wrap_storage(std::unique_ptr<Storage> storage) {
  return std::make_unique<FaultStorage>(std::move(storage), faults_);
}

}  // namespace skv
