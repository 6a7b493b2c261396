// PosixPlatform: the platform of the native build. A database is a directory of ordinary files.
//
//   - Storage: open_storage() creates the directory (and its parents, like `mkdir -p`) when asked
//     to, with mode 0700 (the search bits matching options.file_mode, which every file created
//     in it gets: 0600 by default; the umask still applies), and takes the database's exclusive
//     lock: a lock on the file "LOCK" inside it that belongs to that open file description
//     (F_OFD_SETLK on Linux, flock() elsewhere), so it excludes other processes and other
//     handles in this process alike, and closing some other descriptor of LOCK does not drop
//     it. A process-wide set of the directories it holds, by device and inode (one directory
//     reached by two paths is one entry), refuses a second handle before it touches anything.
//     Either conflict fails with Code::Busy. Destroying the Storage releases the lock.
//   - Log files are opened with O_APPEND: append() is one write() (retried on EINTR and on short
//     writes, never buffered: the WAL batches itself), sync() is fdatasync, read_at() is pread
//     (ending at size()), truncate() is ftruncate. reserve() writes zeros up to the size asked
//     (not synced: the next sync() takes them along) and turns O_APPEND off; appends are then
//     pwrites at size(), over the zeros, so a sync after them need not grow the file.
//   - Objects are written through a 64 KiB buffer into "<name>.partial" and renamed to their
//     name by finish(), after an fdatasync; abort() removes the partial file. A reader therefore
//     never sees half an object under its name, and ObjectStore::open() of an unfinished object is
//     NotFound.
//   - sync_dir() is an fsync of the directory. write_pointer() writes "<name>.partial", syncs it,
//     renames it over <name> and fsyncs the directory (which makes every earlier create and
//     remove durable too).
//   - Names: ObjectStore::list() returns the names ending in ".sst"; LogStore::list() the other
//     names that start with a decimal digit or with "MANIFEST-" (the rule of MemoryPlatform).
//     "LOCK" and names ending in ".partial" belong to the platform: using them is
//     InvalidArgument, they are never listed, and partial files left by a crash are removed when
//     the database is next opened (under its lock, once options.marker shows the directory is
//     a database, and only "<name>.partial" for a pointer name or an object name of the core's
//     shape: digits, then ".sst"). Pointers are files of the directory too, but
//     the core names them so that no list rule matches ("CURRENT").
//   - Errors map through posix_error() (posix_error.h): ENOSPC and EDQUOT are Code::Quota,
//     ENOENT is Code::NotFound, the rest Code::IO; messages read "<dir>/<name>: <op>: <reason>".
//
// Files opened from a Storage keep working after the Storage is destroyed (they hold the
// directory open), but the lock is gone by then.
//
// Thread safety: PosixPlatform, PosixClock, every Storage and store are safe to use from several
// threads at once. A LogFile or ObjectWriter is used by one thread at a time; LogFile::read_at
// and ObjectReader::read_at may run concurrently (pread).

#ifndef SKV_PLATFORM_POSIX_POSIX_PLATFORM_H_
#define SKV_PLATFORM_POSIX_POSIX_PLATFORM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

// Wall-clock time: CLOCK_REALTIME in nanoseconds since the Unix epoch. Not monotonic.
class PosixClock final : public Clock {
 public:
  uint64_t now_nanos() override;
};

// Memtable and block cache memory for the native build. A block whose size is a multiple of 2 MiB
// is a mapping of its own, aligned to 2 MiB and, on Linux, marked with madvise(MADV_HUGEPAGE)
// before it is first touched, so that where transparent huge pages are enabled ("always" or
// "madvise") the kernel may back it with 2 MiB pages: a skiplist search then takes few TLB
// misses, and a block cache miss reads into pages already mapped. It is unmapped when released,
// so a flushed memtable's memory goes back to the system at once. Other sizes come
// from the heap. Where the kernel has no huge pages the mapping still works, with 4 KiB pages.
class PosixMemoryBlocks final : public MemoryBlocks {
 public:
  static constexpr size_t kHugePageSize = size_t{2} << 20;

  size_t preferred_block_size() const override { return kHugePageSize; }
  char* allocate(size_t bytes) override;
  void release(char* block, size_t bytes) noexcept override;
};

class PosixPlatform final : public Platform {
 public:
  // The suffix of files being written (objects before finish(), pointers before their rename).
  static constexpr std::string_view kPartialSuffix = ".partial";
  // The lock file inside every database directory.
  static constexpr std::string_view kLockFileName = "LOCK";

  // A platform whose background work runs on `executor` (natively a ThreadPoolExecutor; see
  // default_platform()). REQUIRES: executor != nullptr.
  explicit PosixPlatform(std::shared_ptr<Executor> executor);
  PosixPlatform(const PosixPlatform&) = delete;
  PosixPlatform& operator=(const PosixPlatform&) = delete;
  ~PosixPlatform() override = default;

  // `path` is a directory path, absolute or relative to the working directory at the time of the
  // call; location() is `path` without trailing '/'. InvalidArgument for an empty path,
  // NotFound when the directory is missing, or lacks options.marker, and !create_if_missing
  // (nothing is created then), Busy when it is locked, IO (or Quota) when the directory cannot
  // be created or opened.
  Result<std::unique_ptr<Storage>> open_storage(const std::string& path,
                                                const StorageOptions& options) override;

  Clock& clock() override { return clock_; }
  Executor& executor() override { return *executor_; }
  std::shared_ptr<MemoryBlocks> memory_blocks() override { return memory_blocks_; }

 private:
  PosixClock clock_;
  const std::shared_ptr<MemoryBlocks> memory_blocks_ = std::make_shared<PosixMemoryBlocks>();
  std::shared_ptr<Executor> executor_;
};

}  // namespace skv

#endif  // SKV_PLATFORM_POSIX_POSIX_PLATFORM_H_
