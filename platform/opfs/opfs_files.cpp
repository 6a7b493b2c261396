// The LogStore, ObjectStore and file handles of the OPFS platform: thin wrappers that pin a slot
// of the pool and forward to it. See slot_pool.h for what each call does to the slots.

#include <algorithm>
#include <utility>

#include "platform/opfs/opfs_storage.h"
#include "util/status_macros.h"

namespace skv {

namespace {

class OpfsLogFile final : public LogFile {
 public:
  OpfsLogFile(std::shared_ptr<SlotPool> pool, size_t slot, std::string name)
      : pool_(std::move(pool)), slot_(slot), name_(std::move(name)) {}
  ~OpfsLogFile() override { (void)close(); }

  const std::string& name() const override { return name_; }

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(check_open());
    return pool_->append(slot_, data);
  }

  Status sync() override {
    SKV_RETURN_IF_ERROR(check_open());
    return pool_->sync(slot_);
  }

  uint64_t size() const override { return closed_ ? 0 : pool_->file_size(slot_); }

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    SKV_RETURN_IF_ERROR(check_open());
    return pool_->read(slot_, offset, n, scratch, result);
  }

  Status truncate(uint64_t size) override {
    SKV_RETURN_IF_ERROR(check_open());
    return pool_->truncate(slot_, size);
  }

  Status reserve(uint64_t bytes) override {
    SKV_RETURN_IF_ERROR(check_open());
    return pool_->reserve(slot_, bytes);
  }

  Status close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    return pool_->unpin(slot_);
  }

 private:
  Status check_open() const {
    if (closed_) return Status::io_error(pool_->location() + "/" + name_ + ": file is closed");
    return Status::OK();
  }

  const std::shared_ptr<SlotPool> pool_;
  const size_t slot_;
  const std::string name_;
  bool closed_ = false;
};

class OpfsObjectWriter final : public ObjectWriter {
 public:
  OpfsObjectWriter(std::shared_ptr<SlotPool> pool, size_t slot, std::string name)
      : pool_(std::move(pool)), slot_(slot), name_(std::move(name)) {}
  ~OpfsObjectWriter() override { abort(); }

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(check_writable());
    SKV_RETURN_IF_ERROR(pool_->append(slot_, data));
    size_ += data.size();
    return Status::OK();
  }

  uint64_t size() const override { return size_; }

  Status finish() override {
    SKV_RETURN_IF_ERROR(check_writable());
    SKV_RETURN_IF_ERROR(pool_->finish_object(slot_));
    done_ = true;
    return pool_->unpin(slot_);
  }

  void abort() override {
    if (done_) return;
    done_ = true;
    pool_->discard_object(slot_);
    (void)pool_->unpin(slot_);
  }

 private:
  Status check_writable() const {
    if (done_) {
      return Status::invalid_argument(pool_->location() + "/" + name_ +
                                      ": object already finished or aborted");
    }
    return Status::OK();
  }

  const std::shared_ptr<SlotPool> pool_;
  const size_t slot_;
  const std::string name_;
  uint64_t size_ = 0;
  bool done_ = false;
};

class OpfsObjectReader final : public ObjectReader {
 public:
  OpfsObjectReader(std::shared_ptr<SlotPool> pool, size_t slot, std::string name, uint64_t size)
      : pool_(std::move(pool)), slot_(slot), name_(std::move(name)), size_(size) {}
  ~OpfsObjectReader() override { (void)pool_->unpin(slot_); }

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    if (offset >= size_) {
      *result = std::string_view(scratch, 0);
      return Status::OK();
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
    return pool_->read(slot_, offset, n, scratch, result);
  }

 private:
  const std::shared_ptr<SlotPool> pool_;
  const size_t slot_;
  const std::string name_;
  const uint64_t size_;
};

class OpfsLogStore final : public LogStore {
 public:
  explicit OpfsLogStore(std::shared_ptr<SlotPool> pool) : pool_(std::move(pool)) {}

  Result<std::unique_ptr<LogFile>> create(const std::string& name) override {
    SKV_ASSIGN_OR_RETURN(size_t slot, pool_->create_file(name, SlotKind::Log, /*replace=*/true));
    return std::unique_ptr<LogFile>(std::make_unique<OpfsLogFile>(pool_, slot, name));
  }

  Result<std::unique_ptr<LogFile>> open(const std::string& name) override {
    SKV_ASSIGN_OR_RETURN(size_t slot, pool_->open_file(name, SlotKind::Log));
    return std::unique_ptr<LogFile>(std::make_unique<OpfsLogFile>(pool_, slot, name));
  }

  Status remove(const std::string& name) override { return pool_->remove_file(name); }

  Result<std::vector<std::string>> list() override { return pool_->list_files(SlotKind::Log); }

 private:
  const std::shared_ptr<SlotPool> pool_;
};

class OpfsObjectStore final : public ObjectStore {
 public:
  explicit OpfsObjectStore(std::shared_ptr<SlotPool> pool) : pool_(std::move(pool)) {}

  Result<std::unique_ptr<ObjectWriter>> create(const std::string& name) override {
    SKV_ASSIGN_OR_RETURN(size_t slot,
                         pool_->create_file(name, SlotKind::Object, /*replace=*/false));
    return std::unique_ptr<ObjectWriter>(std::make_unique<OpfsObjectWriter>(pool_, slot, name));
  }

  Result<std::unique_ptr<ObjectReader>> open(const std::string& name) override {
    SKV_ASSIGN_OR_RETURN(size_t slot, pool_->open_file(name, SlotKind::Object));
    const uint64_t size = pool_->file_size(slot);
    return std::unique_ptr<ObjectReader>(
        std::make_unique<OpfsObjectReader>(pool_, slot, name, size));
  }

  Status remove(const std::string& name) override { return pool_->remove_file(name); }

  Result<std::vector<std::string>> list() override { return pool_->list_files(SlotKind::Object); }

 private:
  const std::shared_ptr<SlotPool> pool_;
};

}  // namespace

std::unique_ptr<LogStore> make_opfs_log_store(std::shared_ptr<SlotPool> pool) {
  return std::make_unique<OpfsLogStore>(std::move(pool));
}

std::unique_ptr<ObjectStore> make_opfs_object_store(std::shared_ptr<SlotPool> pool) {
  return std::make_unique<OpfsObjectStore>(std::move(pool));
}

// --- OpfsStorage -------------------------------------------------------------------------------

Result<std::unique_ptr<OpfsStorage>> OpfsStorage::open(const std::string& name,
                                                       std::shared_ptr<SlotHandles> handles,
                                                       const OpfsOptions& options) {
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<SlotPool> pool,
                       SlotPool::open("opfs:" + name, std::move(handles), options));
  return std::unique_ptr<OpfsStorage>(new OpfsStorage(std::move(pool)));
}

OpfsStorage::OpfsStorage(std::shared_ptr<SlotPool> pool)
    : pool_(std::move(pool)),
      logs_(make_opfs_log_store(pool_)),
      objects_(make_opfs_object_store(pool_)) {}

OpfsStorage::~OpfsStorage() {
  pool_->close();
  if (on_close_) on_close_();
}

}  // namespace skv
