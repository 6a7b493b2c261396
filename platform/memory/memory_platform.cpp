// MemoryPlatform: the databases, their locks, crash(), quotas and the helpers tests use to look at
// and damage files. Storage and file handles are in memory_storage.cpp.

#include "platform/memory/memory_platform.h"

#include <algorithm>
#include <utility>

#include "platform/memory/memory_state.h"
#include "util/random.h"
#include "util/status_macros.h"

namespace skv {

namespace {

// "db/" and "db" name the same database; "/" stays "/".
std::string normalize_path(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

Status no_database(const std::string& path) {
  return Status::not_found("mem:" + path + ": no such database");
}

// The live file `name` of `db`. REQUIRES: db.mu held.
Result<std::shared_ptr<MemoryFile>> live_file(const MemoryDatabase& db, const std::string& name) {
  auto it = db.live.find(name);
  if (it == db.live.end()) return Status::not_found(db.label(name) + ": no such file");
  return it->second;
}

// The bytes of `file` that a crash keeps: its durable contents, plus with `rng` (a torn write) a
// prefix of its unsynced bytes drawn from the generator. REQUIRES: file.mu held.
std::string surviving_bytes(const MemoryFile& file, uint64_t* rng) {
  if (file.durable_override) return *file.durable_override;
  uint64_t keep = std::min<uint64_t>(file.synced, file.data.size());
  if (rng != nullptr && file.data.size() > keep) {
    uint64_t unsynced = file.data.size() - keep;
    keep += splitmix64_next(rng) % (unsynced + 1);
  }
  return file.data.substr(0, static_cast<size_t>(keep));
}

// With holes: a log file keeps all its bytes, but each 4 KiB page holding unsynced bytes is left
// unwritten (its unsynced bytes read as zeros) with odds of one in three, drawn from *rng.
// REQUIRES: file.mu held.
std::string surviving_bytes_with_holes(const MemoryFile& file, uint64_t* rng) {
  if (file.durable_override || file.is_object) return surviving_bytes(file, nullptr);
  constexpr uint64_t kPage = 4096;
  std::string bytes = file.data;
  const uint64_t synced = std::min<uint64_t>(file.synced, bytes.size());
  for (uint64_t page = synced / kPage * kPage; page < bytes.size(); page += kPage) {
    if (splitmix64_next(rng) % 3 != 0) continue;
    const uint64_t from = std::max(page, synced);
    const uint64_t to = std::min<uint64_t>(page + kPage, bytes.size());
    std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from),
              bytes.begin() + static_cast<std::ptrdiff_t>(to), '\0');
  }
  return bytes;
}

// Applies `edit(byte, index)` to bytes [offset, offset + n) of the live file `name`, and to the
// same bytes of the durable copy a truncate since the last sync kept (it shares the offsets), so
// the change survives a crash as a disk corruption would. Takes db.mu.
template <typename Edit>
Status edit_bytes(MemoryDatabase& db, const std::string& name, uint64_t offset, uint64_t n,
                  const char* what, Edit edit) {
  std::lock_guard<std::mutex> db_lock(db.mu);
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<MemoryFile> file, live_file(db, name));
  std::lock_guard<std::mutex> file_lock(file->mu);
  uint64_t size = file->data.size();
  if (offset > size || n > size - offset) {
    return Status::invalid_argument(db.label(name) + ": " + what + " of [" +
                                    std::to_string(offset) + ", " + std::to_string(offset + n) +
                                    ") outside a file of " + std::to_string(size) + " bytes");
  }
  for (uint64_t i = 0; i < n; ++i) {
    edit(&file->data[static_cast<size_t>(offset + i)], static_cast<size_t>(i));
  }
  if (file->durable_override) {
    std::string& durable = *file->durable_override;
    for (uint64_t i = 0; i < n && offset + i < durable.size(); ++i) {
      edit(&durable[static_cast<size_t>(offset + i)], static_cast<size_t>(i));
    }
  }
  return Status::OK();
}

}  // namespace

MemoryPlatform::MemoryPlatform() {
  auto queue = std::make_shared<QueueExecutor>();
  queue_executor_ = queue.get();
  executor_ = std::move(queue);
}

MemoryPlatform::MemoryPlatform(std::shared_ptr<Executor> executor)
    : executor_(std::move(executor)) {}

MemoryPlatform::~MemoryPlatform() = default;

std::shared_ptr<MemoryDatabase> MemoryPlatform::find(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = dbs_.find(normalize_path(path));
  return it == dbs_.end() ? nullptr : it->second;
}

Result<std::unique_ptr<Storage>> MemoryPlatform::open_storage(const std::string& path,
                                                              const StorageOptions& options) {
  if (path.empty()) return Status::invalid_argument("mem:: empty database path");
  std::string p = normalize_path(path);
  if (options.read_only && options.create_new) {
    return Status::invalid_argument("mem:" + p +
                                    ": open storage: read_only and create_new exclude each other");
  }
  const bool create = (options.create_if_missing || options.create_new) && !options.read_only;
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<MemoryDatabase> db;
  auto it = dbs_.find(p);
  if (it != dbs_.end()) {
    if (options.create_new) {
      return Status::invalid_argument(it->second->location +
                                      ": already exists (a new database needs a path where "
                                      "nothing is)");
    }
    db = it->second;
  } else {
    if (!create) return no_database(p);
    db = std::make_shared<MemoryDatabase>(p);
    auto q = quotas_.find(p);
    if (q != quotas_.end()) db->quota = q->second;
    dbs_.emplace(p, db);
  }
  std::lock_guard<std::mutex> db_lock(db->mu);
  if (!create && !options.marker.empty() && db->pointers.count(options.marker) == 0) {
    return Status::not_found(db->location + ": not an skv database (it has no " + options.marker +
                             ")");
  }
  if (db->lock_token != 0) return Status::busy(db->location + ": database is already open");
  if (options.read_only) {
    ++db->readers;
    return make_memory_storage(db, 0, true);
  }
  if (db->readers != 0) {
    return Status::busy(db->location +
                        ": database is open read-only; it cannot be opened for "
                        "writing meanwhile");
  }
  uint64_t token = next_token_++;
  db->lock_token = token;
  // Built under the locks, so a concurrent crash() cannot slip between the lock and the handle.
  return make_memory_storage(db, token, false);
}

void MemoryPlatform::crash(uint64_t seed, bool tear) {
  crash_impl(seed, tear ? CrashKind::Torn : CrashKind::Clean);
}

void MemoryPlatform::crash_with_holes(uint64_t seed) { crash_impl(seed, CrashKind::Holes); }

void MemoryPlatform::crash_impl(uint64_t seed, CrashKind kind) {
  uint64_t rng = seed;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [path, db] : dbs_) {  // in path order, so the draws replay
    std::lock_guard<std::mutex> db_lock(db->mu);
    db->generation.fetch_add(1, std::memory_order_acq_rel);
    db->lock_token = 0;
    db->readers = 0;
    // Fresh file objects: handles from before the crash keep the old ones and can never reach
    // the state after it.
    MemoryFileMap survivors;
    uint64_t used = 0;
    for (const auto& [name, file] : db->durable) {
      auto copy = std::make_shared<MemoryFile>();
      {
        std::lock_guard<std::mutex> file_lock(file->mu);
        copy->data = kind == CrashKind::Holes
                         ? surviving_bytes_with_holes(*file, &rng)
                         : surviving_bytes(*file, kind == CrashKind::Torn ? &rng : nullptr);
        copy->is_object = file->is_object;
      }
      copy->synced = copy->data.size();
      copy->finished = true;  // an unfinished object's writer is gone; its bytes stay
      used += copy->data.size();
      survivors.emplace(name, std::move(copy));
    }
    for (const auto& [name, contents] : db->pointers) used += contents.size();
    db->live = survivors;
    db->durable = std::move(survivors);
    db->used = used;
  }
}

void MemoryPlatform::set_quota(const std::string& path, uint64_t bytes) {
  std::string p = normalize_path(path);
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes == kNoQuota) {
    quotas_.erase(p);
  } else {
    quotas_[p] = bytes;
  }
  auto it = dbs_.find(p);
  if (it != dbs_.end()) {
    std::lock_guard<std::mutex> db_lock(it->second->mu);
    it->second->quota = bytes;
  }
}

bool MemoryPlatform::database_exists(const std::string& path) const {
  return find(path) != nullptr;
}

std::vector<std::string> MemoryPlatform::databases() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> paths;
  paths.reserve(dbs_.size());
  for (const auto& [path, db] : dbs_) paths.push_back(path);
  return paths;  // std::map keeps them sorted
}

Status MemoryPlatform::remove_database(const std::string& path) {
  std::string p = normalize_path(path);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = dbs_.find(p);
  if (it == dbs_.end()) return no_database(p);
  {
    std::lock_guard<std::mutex> db_lock(it->second->mu);
    if (it->second->lock_token != 0 || it->second->readers != 0) {
      return Status::busy(it->second->location + ": cannot remove an open database");
    }
    // Handles that outlived their Storage must not write into the removed database.
    it->second->generation.fetch_add(1, std::memory_order_acq_rel);
  }
  dbs_.erase(it);
  return Status::OK();
}

Result<std::vector<MemoryFileInfo>> MemoryPlatform::list_files(const std::string& path) const {
  std::shared_ptr<MemoryDatabase> db = find(path);
  if (!db) return no_database(normalize_path(path));
  std::lock_guard<std::mutex> db_lock(db->mu);
  std::vector<MemoryFileInfo> infos;
  infos.reserve(db->live.size());
  for (const auto& [name, file] : db->live) {  // sorted by name
    MemoryFileInfo info;
    info.name = name;
    auto d = db->durable.find(name);
    info.name_durable = d != db->durable.end() && d->second == file;
    std::lock_guard<std::mutex> file_lock(file->mu);
    info.size = file->data.size();
    info.synced_size = file->durable_override ? file->durable_override->size() : file->synced;
    info.is_object = file->is_object;
    info.finished = file->finished;
    infos.push_back(std::move(info));
  }
  return infos;
}

Result<std::string> MemoryPlatform::read_file(const std::string& path,
                                              const std::string& name) const {
  std::shared_ptr<MemoryDatabase> db = find(path);
  if (!db) return no_database(normalize_path(path));
  std::lock_guard<std::mutex> db_lock(db->mu);
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<MemoryFile> file, live_file(*db, name));
  std::lock_guard<std::mutex> file_lock(file->mu);
  return file->data;
}

Status MemoryPlatform::overwrite_file(const std::string& path, const std::string& name,
                                      uint64_t offset, std::string_view bytes) {
  std::shared_ptr<MemoryDatabase> db = find(path);
  if (!db) return no_database(normalize_path(path));
  return edit_bytes(*db, name, offset, bytes.size(), "overwrite",
                    [&](char* p, size_t i) { *p = bytes[i]; });
}

Status MemoryPlatform::flip_byte(const std::string& path, const std::string& name, uint64_t offset,
                                 uint8_t mask) {
  std::shared_ptr<MemoryDatabase> db = find(path);
  if (!db) return no_database(normalize_path(path));
  return edit_bytes(*db, name, offset, 1, "flip", [mask](char* p, size_t) {
    *p = static_cast<char>(static_cast<uint8_t>(*p) ^ mask);
  });
}

Status MemoryPlatform::truncate_file(const std::string& path, const std::string& name,
                                     uint64_t size) {
  std::shared_ptr<MemoryDatabase> db = find(path);
  if (!db) return no_database(normalize_path(path));
  std::lock_guard<std::mutex> db_lock(db->mu);
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<MemoryFile> file, live_file(*db, name));
  std::lock_guard<std::mutex> file_lock(file->mu);
  if (size > file->data.size()) {
    return Status::invalid_argument(db->label(name) + ": truncate to " + std::to_string(size) +
                                    " would grow a file of " + std::to_string(file->data.size()) +
                                    " bytes");
  }
  db->used -= file->data.size() - size;
  file->data.resize(static_cast<size_t>(size));
  file->synced = std::min<uint64_t>(file->synced, size);
  if (file->durable_override && file->durable_override->size() > size) {
    file->durable_override->resize(static_cast<size_t>(size));
  }
  return Status::OK();
}

uint64_t MemoryPlatform::total_bytes(const std::string& path) const {
  std::shared_ptr<MemoryDatabase> db = find(path);
  if (!db) return 0;
  std::lock_guard<std::mutex> db_lock(db->mu);
  return db->used;
}

uint64_t MemoryPlatform::total_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [path, db] : dbs_) {
    std::lock_guard<std::mutex> db_lock(db->mu);
    total += db->used;
  }
  return total;
}

}  // namespace skv
