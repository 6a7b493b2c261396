// MemoryPlatform: a whole platform held in memory, for tests, deterministic simulation and
// in-memory trees. It models durability precisely enough to test crash consistency without
// killing processes. It fails calls only for reasons of its own (a handle a crash invalidated, a
// quota); to fail chosen calls, wrap it (or any platform) in a FaultPlatform
// (platform/fault/fault_platform.h).
//
// Databases are keyed by path and live as long as the MemoryPlatform object: a Storage may be
// destroyed and the same path opened again to see its files. Opening a path whose Storage still
// exists fails with Code::Busy.
//
// What is durable (what survives crash()):
//   - File bytes: a file keeps its bytes and its synced length. LogFile::sync() and
//     ObjectWriter::finish() make the bytes written so far durable; LogFile::truncate() is durable
//     after the next sync().
//   - Names: creations and removals of files are durable only after Storage::sync_dir(). Until
//     then a crash brings back the namespace of the last sync_dir(): new files vanish, removed
//     ones come back (with their durable bytes).
//   - Pointers: write_pointer() is atomic and durable when it returns. Unlike the POSIX platform it
//     does not make other pending names durable, so code that forgets sync_dir() fails here.
//
// crash() applies this to every database at once, releases every lock (as a killed process
// would) and invalidates every handle opened before it: later calls on such a handle (files,
// stores, the old Storage) fail with Code::IO and never touch the state after the crash.
//
// list() follows the POSIX platform's name rule, so code that works here works there:
// ObjectStore::list() returns the names ending in ".sst"; LogStore::list() the other names that
// start with a decimal digit or with "MANIFEST-" (the core numbers its files). Pointer records
// live apart from files and are never listed. Both stores share one namespace per database.
// ObjectStore::open() of an object whose writer has not finished fails with InvalidArgument.
//
// Quotas: a byte quota per database makes appends and pointer writes that would exceed it fail
// with Code::Quota, leaving the file unchanged.
//
// Messages name the file as "mem:<path>/<name>: ...".
//
// Thread safety: MemoryPlatform, and every Storage, store and reader it hands out, may be used
// from several threads at once; LogFile::read_at and ObjectReader::read_at run concurrently with
// appends (each file has its own mutex; reads copy into the caller's scratch).

#ifndef SKV_PLATFORM_MEMORY_MEMORY_PLATFORM_H_
#define SKV_PLATFORM_MEMORY_MEMORY_PLATFORM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "platform/memory/fake_clock.h"
#include "skv/platform.h"
#include "skv/queue_executor.h"
#include "skv/status.h"

namespace skv {

// One file of a database, as the tests see it.
struct MemoryFileInfo {
  std::string name;
  uint64_t size = 0;         // bytes now, unsynced ones included
  uint64_t synced_size = 0;  // bytes that survive a crash (if the name does)
  // This file survives a crash under its name: it was there at the last sync_dir (false for a
  // name created again since, whose older file a crash would bring back).
  bool name_durable = false;
  bool is_object = false;  // created through the ObjectStore
  bool finished = true;    // objects: finish() was called
};

struct MemoryDatabase;  // internal

class MemoryPlatform final : public Platform {
 public:
  static constexpr uint64_t kNoQuota = UINT64_MAX;

  // A platform with its own FakeClock and QueueExecutor.
  MemoryPlatform();
  // A platform whose background work runs on `executor` (e.g. a ThreadPoolExecutor).
  // REQUIRES: executor != nullptr.
  explicit MemoryPlatform(std::shared_ptr<Executor> executor);
  MemoryPlatform(const MemoryPlatform&) = delete;
  MemoryPlatform& operator=(const MemoryPlatform&) = delete;
  ~MemoryPlatform() override;

  // Platform. `path` is any non-empty string (trailing '/' ignored); location() is "mem:<path>".
  // Without options.create_if_missing, a path with no database, or one whose database lacks
  // options.marker, is NotFound.
  Result<std::unique_ptr<Storage>> open_storage(const std::string& path,
                                                const StorageOptions& options) override;
  Clock& clock() override { return clock_; }
  Executor& executor() override { return *executor_; }

  FakeClock& fake_clock() { return clock_; }
  // The built-in queue executor, or null when the platform was given an executor.
  QueueExecutor* queue_executor() { return queue_executor_; }

  // Simulates a power failure of the whole machine: every database's namespace reverts to its
  // last sync_dir(), every file drops its unsynced bytes, every lock is released and every handle
  // opened before is invalidated. With `tear`, each file keeps instead a prefix of its unsynced
  // bytes (a torn write) whose length is drawn from a generator seeded with `seed`, so a crash
  // replays exactly. A file truncated since its last sync() reverts to its durable contents.
  // An object whose writer had not finished survives (if its name does) as a finished object
  // holding its surviving bytes, as a file on disk would.
  void crash(uint64_t seed, bool tear);
  // The same power failure, with the unsynced bytes of log files written back out of order:
  // each such file keeps its length, and each 4 KiB page holding unsynced bytes may have stayed
  // unwritten (those bytes read as zeros; odds of one in three per page, drawn from `seed`), as
  // pages of an unsynced write can reach a disk in any order. Objects lose their unsynced bytes
  // as with crash(seed, false).
  void crash_with_holes(uint64_t seed);

  // Caps the bytes (files plus pointer records) of the database at `path`, existing or future.
  // kNoQuota removes the cap. Bytes already stored beyond a new cap stay.
  void set_quota(const std::string& path, uint64_t bytes);

  bool database_exists(const std::string& path) const;
  // Paths of every database, sorted.
  std::vector<std::string> databases() const;
  // Deletes a database and everything in it. NotFound if absent, Busy while it is open.
  Status remove_database(const std::string& path);

  // The files of a database (its current namespace), sorted by name. NotFound if no such db.
  Result<std::vector<MemoryFileInfo>> list_files(const std::string& path) const;
  // The current bytes of a file, unsynced ones included. NotFound if absent.
  Result<std::string> read_file(const std::string& path, const std::string& name) const;
  // Overwrites bytes of a file in place, durably (as a disk corruption would).
  // InvalidArgument if [offset, offset + bytes.size()) is not inside the file.
  Status overwrite_file(const std::string& path, const std::string& name, uint64_t offset,
                        std::string_view bytes);
  // XORs the byte at `offset` with `mask`, durably. Same errors as overwrite_file.
  Status flip_byte(const std::string& path, const std::string& name, uint64_t offset,
                   uint8_t mask = 0x01);
  // Shrinks a file to `size` bytes, durably. InvalidArgument if size > current size.
  Status truncate_file(const std::string& path, const std::string& name, uint64_t size);
  // Bytes of files and pointer records of one database (0 if absent), or of all of them.
  uint64_t total_bytes(const std::string& path) const;
  uint64_t total_bytes() const;

 private:
  enum class CrashKind { Clean, Torn, Holes };
  void crash_impl(uint64_t seed, CrashKind kind);
  std::shared_ptr<MemoryDatabase> find(const std::string& path) const;

  FakeClock clock_;
  std::shared_ptr<Executor> executor_;
  QueueExecutor* queue_executor_ = nullptr;

  mutable std::mutex mu_;  // guards the two maps and next_token_
  std::map<std::string, std::shared_ptr<MemoryDatabase>> dbs_;
  std::map<std::string, uint64_t> quotas_;
  uint64_t next_token_ = 1;
};

}  // namespace skv

#endif  // SKV_PLATFORM_MEMORY_MEMORY_PLATFORM_H_
