// Storage, stores and file handles of the in-memory platform. See memory_platform.h for the
// durability model and memory_state.h for the locking order.

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "platform/memory/memory_state.h"
#include "util/status_macros.h"

namespace skv {

namespace {

// What every handle of one Storage shares: the database and the generation the handle belongs
// to (a crash bumps the database's generation and orphans the handle).
struct Context {
  std::shared_ptr<MemoryDatabase> db;
  uint64_t generation = 0;
  bool read_only = false;  // StorageOptions::read_only

  bool alive() const { return db->generation.load(std::memory_order_acquire) == generation; }
  // Messages of calls that name no file (sync_dir, list) name the database.
  std::string label(std::string_view name) const {
    return name.empty() ? db->location : db->label(name);
  }
  Status stale(std::string_view name) const {
    return Status::io_error(label(name) +
                            ": handle invalidated by a simulated crash or a removed database");
  }
  // The check every call starts with: a stale handle fails.
  Status enter(std::string_view name) const {
    if (!alive()) return stale(name);
    return Status::OK();
  }
  // The check of every call that creates, changes or removes a file.
  Status enter_write(std::string_view name) const {
    if (read_only) return Status::read_only(label(name) + ": the database is open read-only");
    return enter(name);
  }
  // REQUIRES: db->mu held. Checks the quota for `extra` more bytes.
  Status reserve(std::string_view name, uint64_t extra) const {
    if (extra == 0 || db->quota == MemoryPlatform::kNoQuota) return Status::OK();
    if (db->used > db->quota || extra > db->quota - db->used) {
      return Status::quota(db->label(name) + ": quota exceeded (" + std::to_string(db->used) +
                           " of " + std::to_string(db->quota) + " bytes used, " +
                           std::to_string(extra) + " more asked)");
    }
    return Status::OK();
  }
  Status check_name(std::string_view name) const {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
        name.find('\0') != std::string_view::npos) {
      return Status::invalid_argument(db->label(name) + ": invalid file name");
    }
    return Status::OK();
  }
};

// Copies up to n bytes at offset from data[0, limit) into scratch. REQUIRES: the file mutex held.
void copy_out(const std::string& data, uint64_t limit, uint64_t offset, size_t n, char* scratch,
              std::string_view* result) {
  limit = std::min<uint64_t>(limit, data.size());
  if (offset >= limit) {
    *result = std::string_view(scratch, 0);
    return;
  }
  size_t k = static_cast<size_t>(std::min<uint64_t>(n, limit - offset));
  std::memcpy(scratch, data.data() + offset, k);
  *result = std::string_view(scratch, k);
}

class MemLogFile final : public LogFile {
 public:
  MemLogFile(Context ctx, std::string name, std::shared_ptr<MemoryFile> file)
      : ctx_(std::move(ctx)), name_(std::move(name)), file_(std::move(file)) {}

  const std::string& name() const override { return name_; }

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(check_open());
    SKV_RETURN_IF_ERROR(ctx_.enter_write(name_));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name_);
    bool live = db.is_live(name_, file_.get());
    if (live) SKV_RETURN_IF_ERROR(ctx_.reserve(name_, data.size()));
    std::lock_guard<std::mutex> lock(file_->mu);
    file_->data.append(data);
    if (live) db.used += data.size();
    return Status::OK();
  }

  Status sync() override {
    SKV_RETURN_IF_ERROR(check_open());
    SKV_RETURN_IF_ERROR(ctx_.enter(name_));
    std::lock_guard<std::mutex> db_lock(ctx_.db->mu);
    if (!ctx_.alive()) return ctx_.stale(name_);
    std::lock_guard<std::mutex> lock(file_->mu);
    file_->mark_synced();
    return Status::OK();
  }

  uint64_t size() const override {
    std::lock_guard<std::mutex> lock(file_->mu);
    return file_->data.size();
  }

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    SKV_RETURN_IF_ERROR(check_open());
    SKV_RETURN_IF_ERROR(ctx_.enter(name_));
    std::lock_guard<std::mutex> lock(file_->mu);
    copy_out(file_->data, UINT64_MAX, offset, n, scratch, result);
    return Status::OK();
  }

  Status truncate(uint64_t size) override {
    SKV_RETURN_IF_ERROR(check_open());
    SKV_RETURN_IF_ERROR(ctx_.enter_write(name_));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name_);
    std::lock_guard<std::mutex> lock(file_->mu);
    MemoryFile& f = *file_;
    if (size > f.data.size()) {
      return Status::invalid_argument(db.label(name_) + ": truncate to " + std::to_string(size) +
                                      " would grow a file of " + std::to_string(f.data.size()) +
                                      " bytes");
    }
    if (size < f.synced && !f.durable_override) f.durable_override = f.data.substr(0, f.synced);
    uint64_t cut = f.data.size() - size;
    f.data.resize(size);
    f.synced = std::min<uint64_t>(f.synced, size);
    if (db.is_live(name_, file_.get())) db.used -= cut;
    return Status::OK();
  }

  Status close() override {
    closed_.store(true, std::memory_order_relaxed);
    return Status::OK();
  }

 private:
  Status check_open() const {
    if (closed_.load(std::memory_order_relaxed))
      return Status::io_error(ctx_.db->label(name_) + ": file is closed");
    return Status::OK();
  }

  Context ctx_;
  const std::string name_;
  std::shared_ptr<MemoryFile> file_;
  std::atomic<bool> closed_{false};
};

class MemObjectWriter final : public ObjectWriter {
 public:
  MemObjectWriter(Context ctx, std::string name, std::shared_ptr<MemoryFile> file)
      : ctx_(std::move(ctx)), name_(std::move(name)), file_(std::move(file)) {}
  ~MemObjectWriter() override {
    if (!done_) abort();
  }

  Status append(std::string_view data) override {
    SKV_RETURN_IF_ERROR(check_writable());
    SKV_RETURN_IF_ERROR(ctx_.enter(name_));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name_);
    bool live = db.is_live(name_, file_.get());
    if (live) SKV_RETURN_IF_ERROR(ctx_.reserve(name_, data.size()));
    std::lock_guard<std::mutex> lock(file_->mu);
    file_->data.append(data);
    if (live) db.used += data.size();
    size_ += data.size();
    return Status::OK();
  }

  uint64_t size() const override { return size_; }

  Status finish() override {
    SKV_RETURN_IF_ERROR(check_writable());
    SKV_RETURN_IF_ERROR(ctx_.enter(name_));
    std::lock_guard<std::mutex> db_lock(ctx_.db->mu);
    if (!ctx_.alive()) return ctx_.stale(name_);
    std::lock_guard<std::mutex> lock(file_->mu);
    file_->mark_synced();
    file_->finished = true;
    done_ = true;
    return Status::OK();
  }

  void abort() override {
    if (done_) return;
    done_ = true;
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive() || !db.is_live(name_, file_.get())) return;
    std::lock_guard<std::mutex> lock(file_->mu);
    db.used -= file_->data.size();
    db.live.erase(name_);
  }

 private:
  Status check_writable() const {
    if (done_) {
      return Status::invalid_argument(ctx_.db->label(name_) +
                                      ": object already finished or aborted");
    }
    return Status::OK();
  }

  Context ctx_;
  const std::string name_;
  std::shared_ptr<MemoryFile> file_;
  uint64_t size_ = 0;
  bool done_ = false;
};

class MemObjectReader final : public ObjectReader {
 public:
  MemObjectReader(Context ctx, std::string name, std::shared_ptr<MemoryFile> file, uint64_t size)
      : ctx_(std::move(ctx)), name_(std::move(name)), file_(std::move(file)), size_(size) {}

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return size_; }

  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    SKV_RETURN_IF_ERROR(ctx_.enter(name_));
    std::lock_guard<std::mutex> lock(file_->mu);
    copy_out(file_->data, size_, offset, n, scratch, result);
    return Status::OK();
  }

 private:
  Context ctx_;
  const std::string name_;
  std::shared_ptr<MemoryFile> file_;
  const uint64_t size_;
};

// Removal and listing are the same for both stores (they share one namespace).
Status remove_file(const Context& ctx, const std::string& name) {
  SKV_RETURN_IF_ERROR(ctx.check_name(name));
  SKV_RETURN_IF_ERROR(ctx.enter_write(name));
  MemoryDatabase& db = *ctx.db;
  std::lock_guard<std::mutex> db_lock(db.mu);
  if (!ctx.alive()) return ctx.stale(name);
  auto it = db.live.find(name);
  if (it == db.live.end()) return Status::not_found(db.label(name) + ": remove: no such file");
  {
    std::lock_guard<std::mutex> lock(it->second->mu);
    db.used -= it->second->data.size();
  }
  db.live.erase(it);
  return Status::OK();
}

Result<std::vector<std::string>> list_files(const Context& ctx, bool objects) {
  SKV_RETURN_IF_ERROR(ctx.enter({}));
  MemoryDatabase& db = *ctx.db;
  std::lock_guard<std::mutex> db_lock(db.mu);
  if (!ctx.alive()) return ctx.stale({});
  std::vector<std::string> names;
  for (const auto& [name, file] : db.live) {
    if (objects ? memory_is_object_name(name) : memory_is_log_name(name)) names.push_back(name);
  }
  return names;
}

class MemLogStore final : public LogStore {
 public:
  explicit MemLogStore(Context ctx) : ctx_(std::move(ctx)) {}

  Result<std::unique_ptr<LogFile>> create(const std::string& name) override {
    SKV_RETURN_IF_ERROR(ctx_.check_name(name));
    SKV_RETURN_IF_ERROR(ctx_.enter_write(name));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name);
    auto it = db.live.find(name);
    if (it != db.live.end()) {
      std::lock_guard<std::mutex> lock(it->second->mu);
      db.used -= it->second->data.size();
    }
    auto file = std::make_shared<MemoryFile>();
    db.live[name] = file;
    return std::unique_ptr<LogFile>(std::make_unique<MemLogFile>(ctx_, name, std::move(file)));
  }

  Result<std::unique_ptr<LogFile>> open(const std::string& name) override {
    SKV_RETURN_IF_ERROR(ctx_.check_name(name));
    SKV_RETURN_IF_ERROR(ctx_.enter(name));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name);
    auto it = db.live.find(name);
    if (it == db.live.end()) return Status::not_found(db.label(name) + ": open: no such file");
    return std::unique_ptr<LogFile>(std::make_unique<MemLogFile>(ctx_, name, it->second));
  }

  Status remove(const std::string& name) override { return remove_file(ctx_, name); }
  Result<std::vector<std::string>> list() override { return list_files(ctx_, false); }

 private:
  Context ctx_;
};

class MemObjectStore final : public ObjectStore {
 public:
  explicit MemObjectStore(Context ctx) : ctx_(std::move(ctx)) {}

  Result<std::unique_ptr<ObjectWriter>> create(const std::string& name) override {
    SKV_RETURN_IF_ERROR(ctx_.check_name(name));
    SKV_RETURN_IF_ERROR(ctx_.enter_write(name));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name);
    if (db.live.count(name) != 0) {
      return Status::invalid_argument(db.label(name) + ": create: file already exists");
    }
    auto file = std::make_shared<MemoryFile>();
    file->is_object = true;
    file->finished = false;
    db.live[name] = file;
    return std::unique_ptr<ObjectWriter>(
        std::make_unique<MemObjectWriter>(ctx_, name, std::move(file)));
  }

  Result<std::unique_ptr<ObjectReader>> open(const std::string& name) override {
    SKV_RETURN_IF_ERROR(ctx_.check_name(name));
    SKV_RETURN_IF_ERROR(ctx_.enter(name));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name);
    auto it = db.live.find(name);
    if (it == db.live.end()) return Status::not_found(db.label(name) + ": open: no such file");
    std::lock_guard<std::mutex> lock(it->second->mu);
    if (!it->second->finished) {
      return Status::invalid_argument(db.label(name) + ": open: object is still being written");
    }
    return std::unique_ptr<ObjectReader>(
        std::make_unique<MemObjectReader>(ctx_, name, it->second, it->second->data.size()));
  }

  Status remove(const std::string& name) override { return remove_file(ctx_, name); }
  Result<std::vector<std::string>> list() override { return list_files(ctx_, true); }

 private:
  Context ctx_;
};

class MemStorage final : public Storage {
 public:
  MemStorage(Context ctx, uint64_t token)
      : ctx_(std::move(ctx)), token_(token), logs_(ctx_), objects_(ctx_) {}

  ~MemStorage() override {
    std::lock_guard<std::mutex> db_lock(ctx_.db->mu);
    if (ctx_.read_only) {
      // A crash() or remove_database() since the open already dropped every reader.
      if (ctx_.alive() && ctx_.db->readers > 0) --ctx_.db->readers;
    } else if (ctx_.db->lock_token == token_) {
      ctx_.db->lock_token = 0;
    }
  }

  const std::string& location() const override { return ctx_.db->location; }
  LogStore& logs() override { return logs_; }
  ObjectStore& objects() override { return objects_; }

  Status sync_dir() override {
    SKV_RETURN_IF_ERROR(ctx_.enter({}));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale({});
    db.durable = db.live;
    return Status::OK();
  }

  Status write_pointer(const std::string& name, std::string_view contents) override {
    SKV_RETURN_IF_ERROR(ctx_.check_name(name));
    SKV_RETURN_IF_ERROR(ctx_.enter_write(name));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name);
    auto it = db.pointers.find(name);
    uint64_t old_size = it == db.pointers.end() ? 0 : it->second.size();
    if (contents.size() > old_size)
      SKV_RETURN_IF_ERROR(ctx_.reserve(name, contents.size() - old_size));
    db.used = db.used - old_size + contents.size();
    db.pointers[name] = std::string(contents);
    return Status::OK();
  }

  Result<std::string> read_pointer(const std::string& name) override {
    SKV_RETURN_IF_ERROR(ctx_.check_name(name));
    SKV_RETURN_IF_ERROR(ctx_.enter(name));
    MemoryDatabase& db = *ctx_.db;
    std::lock_guard<std::mutex> db_lock(db.mu);
    if (!ctx_.alive()) return ctx_.stale(name);
    auto it = db.pointers.find(name);
    if (it == db.pointers.end()) return Status::not_found(db.label(name) + ": no such pointer");
    return it->second;
  }

 private:
  Context ctx_;
  const uint64_t token_;
  MemLogStore logs_;
  MemObjectStore objects_;
};

}  // namespace

bool memory_is_object_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".sst";
  return name.size() > kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix;
}

bool memory_is_log_name(std::string_view name) {
  if (name.empty() || memory_is_object_name(name)) return false;
  return (name[0] >= '0' && name[0] <= '9') || name.substr(0, 9) == "MANIFEST-";
}

std::unique_ptr<Storage> make_memory_storage(std::shared_ptr<MemoryDatabase> db, uint64_t token,
                                             bool read_only) {
  Context ctx;
  ctx.read_only = read_only;
  ctx.generation = db->generation.load(std::memory_order_acquire);
  ctx.db = std::move(db);
  return std::make_unique<MemStorage>(std::move(ctx), token);
}

}  // namespace skv
