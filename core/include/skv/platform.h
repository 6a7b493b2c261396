// The platform interface: everything the core needs from the machine it runs on.
//
// The core sees storage through two shapes of file, chosen to fit what it stores:
//   - LogFile / LogStore: append-only files that are read back in order or by position (WAL
//     segments, the manifest, the value log).
//   - ObjectWriter / ObjectReader / ObjectStore: immutable objects written once from start to end,
//     then read at random offsets (SSTables).
// plus a Storage that groups both for one database, a Clock, an Executor and MemoryBlocks (where
// the memtable's memory comes from).
//
// Exactly one platform is linked into a program (POSIX natively, OPFS in the browser, the
// in-memory one for tests and in-memory trees); the core never includes a platform header.
//
// Thread safety: Storage, LogStore, ObjectStore, Clock and Executor must be safe to call from
// several threads at once, and so must MemoryBlocks. A LogFile or ObjectWriter is used by one
// thread at a time, except that LogFile::read_at and ObjectReader::read_at may run concurrently
// with each other and with appends to a different region, and LogFile::size with an append (it
// returns the size from before or after it).
//
// Errors: every failure is a Status whose message names the file. Running out of space is
// Code::Quota; any other failure of the underlying system is Code::IO.
//
// Names: the core names its files "<number>.<ext>" (a zero-padded decimal number, a dot and a
// lower-case extension: "000012.sst", "000013.wal", "000014.vlog") or "MANIFEST-<number>", and
// its pointer records in capitals ("CURRENT"). Objects are the names that end in ".sst". A
// platform may rely on this to tell the database's files from anything else in the same place.

#ifndef SKV_PLATFORM_H_
#define SKV_PLATFORM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skv/status.h"

namespace skv {

// An append-only file. Appended bytes are readable at once; they are durable only after sync().
class LogFile {
 public:
  LogFile() = default;
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;
  virtual ~LogFile() = default;

  virtual const std::string& name() const = 0;

  // Appends `data` at the end of the file.
  virtual Status append(std::string_view data) = 0;

  // Makes every byte appended so far durable (fdatasync natively, flush() in OPFS).
  virtual Status sync() = 0;

  // Current size in bytes, appended-but-unsynced bytes included.
  virtual uint64_t size() const = 0;

  // Reads up to `n` bytes at `offset`. On success *result points at the bytes read, which are
  // either in `scratch` (which must hold n bytes) or in memory owned by the file that stays valid
  // until the file is closed. A read that reaches the end of the file returns fewer bytes; a read
  // at or past the end returns none. Neither is an error.
  virtual Status read_at(uint64_t offset, size_t n, char* scratch,
                         std::string_view* result) const = 0;

  // Shrinks the file to `size` bytes (used to cut a torn tail during recovery), dropping any
  // zeros reserve() laid down past the end too. Durable after sync().
  virtual Status truncate(uint64_t size) = 0;
  // Room ahead: makes the stored file at least `bytes` long by laying zeros past its end, where
  // writing over zeros already in the file is cheaper than growing it (in OPFS, the flush after a
  // write that grows the file costs more). The contents do not change: size() and read_at still
  // end at the last appended byte, and appends replace the zeros. The zeros are in storage,
  // though: whoever opens the file after a crash or a close finds them after the last append,
  // until truncate(size()) removes them. A platform that gains nothing from it keeps the default,
  // which changes nothing and returns NotSupported (POSIX; the in-memory platform): callers then
  // stop asking and their appends grow the file.
  virtual Status reserve(uint64_t bytes) {
    return Status::not_supported(name() + ": no room reserved ahead (" + std::to_string(bytes) +
                                 " bytes asked)");
  }

  // Releases the file. Unsynced bytes are not made durable. Idempotent.
  virtual Status close() = 0;
};

class LogStore {
 public:
  virtual ~LogStore() = default;

  // Creates a new empty file named `name`, replacing any file of that name.
  virtual Result<std::unique_ptr<LogFile>> create(const std::string& name) = 0;

  // Opens an existing file for reading and appending at its end. NotFound if it does not exist.
  virtual Result<std::unique_ptr<LogFile>> open(const std::string& name) = 0;

  // Removes a file. NotFound if it does not exist. Durable after Storage::sync_dir().
  virtual Status remove(const std::string& name) = 0;

  // The names of every log file, in no particular order.
  virtual Result<std::vector<std::string>> list() = 0;
};

// Writes one immutable object from start to end. Exactly one of finish() or abort() ends it; a
// writer destroyed without either aborts.
class ObjectWriter {
 public:
  ObjectWriter() = default;
  ObjectWriter(const ObjectWriter&) = delete;
  ObjectWriter& operator=(const ObjectWriter&) = delete;
  virtual ~ObjectWriter() = default;

  virtual Status append(std::string_view data) = 0;
  virtual uint64_t size() const = 0;

  // Makes the whole object durable and readable under its name. The directory entry itself is
  // durable only after Storage::sync_dir().
  virtual Status finish() = 0;

  // Discards the object. Never fails; best effort.
  virtual void abort() = 0;
};

// Random-access reads of a finished object. read_at may be called from several threads at once.
class ObjectReader {
 public:
  ObjectReader() = default;
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;
  virtual ~ObjectReader() = default;

  virtual const std::string& name() const = 0;
  virtual uint64_t size() const = 0;

  // Same contract as LogFile::read_at.
  virtual Status read_at(uint64_t offset, size_t n, char* scratch,
                         std::string_view* result) const = 0;
};

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Starts writing a new object. InvalidArgument if an object of that name exists.
  virtual Result<std::unique_ptr<ObjectWriter>> create(const std::string& name) = 0;

  // Opens a finished object. NotFound if it does not exist.
  virtual Result<std::unique_ptr<ObjectReader>> open(const std::string& name) = 0;

  // Removes an object. NotFound if it does not exist. Durable after Storage::sync_dir().
  virtual Status remove(const std::string& name) = 0;

  virtual Result<std::vector<std::string>> list() = 0;
};

// The storage of one open database: a directory natively, a slot pool in OPFS. While a Storage
// object exists it holds the database's exclusive lock; destroying it releases the lock.
class Storage {
 public:
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  virtual ~Storage() = default;

  // Where this storage lives, for messages ("data/mydb", "opfs:mydb", "mem:mydb").
  virtual const std::string& location() const = 0;

  virtual LogStore& logs() = 0;
  virtual ObjectStore& objects() = 0;

  // Makes every create, remove and pointer write so far durable (fsync of the directory
  // natively; a no-op where it means nothing).
  virtual Status sync_dir() = 0;

  // Atomically replaces the small record `name` (e.g. "CURRENT") with `contents`: after a crash
  // a reader sees either the old or the new contents, never a mix. Durable when it returns OK.
  virtual Status write_pointer(const std::string& name, std::string_view contents) = 0;

  // Reads a record written by write_pointer. NotFound if there is none.
  virtual Result<std::string> read_pointer(const std::string& name) = 0;

  // Gives this storage the file `name` of `source` (another open storage of the same platform)
  // without copying its bytes where the platform can: natively a hard link, when both
  // directories are on one file system. The file must never change afterwards in either storage:
  // the core links only tables and value log files, which are immutable once written. Durable
  // after sync_dir(). NotSupported where the platform cannot (the default): the caller then
  // copies the bytes.
  virtual Status link_from(Storage& source, const std::string& name) {
    (void)source;
    return Status::not_supported(location() + "/" + name + ": this platform cannot link files");
  }
};

// Time source. Fakeable in tests and simulation.
class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since the Unix epoch.
  virtual uint64_t now_nanos() = 0;
};

// Runs background work (flush, compaction). Natively a small thread pool; in wasm and in
// deterministic tests a queue whose tasks run when run_pending() is called.
class Executor {
 public:
  virtual ~Executor() = default;

  // Queues `task`. It runs later, on another thread if concurrent(), otherwise inside a later
  // run_pending() call.
  virtual void schedule(std::function<void()> task) = 0;

  // True if scheduled tasks make progress without run_pending() being called.
  virtual bool concurrent() const = 0;

  // Runs up to `max_tasks` queued tasks on the calling thread; returns how many ran. A
  // concurrent executor may run none and return 0.
  virtual size_t run_pending(size_t max_tasks) = 0;
};

// Large blocks of memory for the memtable's arena and the block cache. Every committed write is
// copied into an arena block, and every read of recent data walks a skiplist through them; every
// block cache miss reads a table block into a buffer carved from one (the cache's pool,
// docs/memory.md). A platform can serve them from memory that suits that work (natively: 2 MiB-
// aligned mappings the kernel may back with huge pages, so a search takes fewer TLB misses and a
// read fills pages that are already there); the default is the heap, which the block cache then
// uses directly.
class MemoryBlocks {
 public:
  virtual ~MemoryBlocks() = default;

  // The block size this source serves best, or 0 for no preference. A tree whose memtables are
  // at least 16 blocks of it large carves them from blocks of this size.
  virtual size_t preferred_block_size() const = 0;

  // Returns `bytes` of uninitialized memory, aligned to at least alignof(std::max_align_t).
  // Throws std::bad_alloc when the memory cannot be had, as operator new does.
  // REQUIRES: bytes > 0.
  virtual char* allocate(size_t bytes) = 0;

  // Gives back a block allocate() returned, with the `bytes` it was asked for.
  virtual void release(char* block, size_t bytes) noexcept = 0;
};

// MemoryBlocks from the heap (operator new[] and delete[]), with no preferred block size.
class HeapMemoryBlocks final : public MemoryBlocks {
 public:
  size_t preferred_block_size() const override { return 0; }
  char* allocate(size_t bytes) override { return new char[bytes]; }
  void release(char* block, size_t bytes) noexcept override {
    (void)bytes;
    delete[] block;
  }
};

// The one HeapMemoryBlocks every caller that names no other source shares. Never destroyed
// before the objects that hold it.
inline const std::shared_ptr<MemoryBlocks>& heap_memory_blocks() {
  static const std::shared_ptr<MemoryBlocks> heap = std::make_shared<HeapMemoryBlocks>();
  return heap;
}

// How Platform::open_storage treats what it finds at a path.
struct StorageOptions {
  // Create the storage (natively: the directory, and its parents) when it does not exist.
  bool create_if_missing = true;
  // The pointer record (Storage::write_pointer) every database holds: the core passes its
  // "CURRENT". When it is given:
  //   - without create_if_missing, a storage that lacks it is not a database: open_storage
  //     returns NotFound naming the path and creates nothing there (no directory, no lock file);
  //   - when it is present, the storage is known to be a database, and only then may the
  //     platform remove leftovers of its own (natively: "<name>.partial" files of an interrupted
  //     write, for names the core generates). A platform never removes anything else it did not
  //     write.
  std::string marker;
  // Permission bits of the files the storage creates; directories get the matching search bits
  // (0600 -> 0700, 0640 -> 0750). The process's umask still applies. Where files have no
  // permissions (the browser, memory) it means nothing.
  uint32_t file_mode = 0600;
  // Open an existing database to read it only (Options::read_only). Nothing is created, not the
  // storage, not a lock file (a storage without `marker` is NotFound), and nothing is removed.
  // The lock is shared: several read-only storages of one database may be open at once, in this
  // process and in others, but not while a storage that may write is (Busy, either way round).
  // Calls that would create, change or remove a file fail with ReadOnly. The OPFS platform
  // treats it as an ordinary, exclusive open (its access handles allow one holder).
  bool read_only = false;
  // Create a new storage where nothing exists yet (the target of a checkpoint): InvalidArgument
  // naming the path when anything is there, and then nothing is created or changed.
  bool create_new = false;
};

class Platform {
 public:
  virtual ~Platform() = default;

  // Opens the database storage at `path` and takes its exclusive lock. Creates it first when
  // options.create_if_missing is true, else NotFound if it does not exist (or holds no
  // options.marker). Busy if the database is already open, in this process or in another one.
  // A call that fails creates nothing it did not need to find out that it fails.
  virtual Result<std::unique_ptr<Storage>> open_storage(const std::string& path,
                                                        const StorageOptions& options) = 0;

  virtual Clock& clock() = 0;
  virtual Executor& executor() = 0;

  // Where trees on this platform get their memtables' memory. Each memtable holds a reference
  // until it is destroyed, which may be after its tree is closed. The default is the heap.
  virtual std::shared_ptr<MemoryBlocks> memory_blocks() { return heap_memory_blocks(); }
};

// The platform a TreeBuilder uses when none is given. Only the native library (skv::native, which
// skv::skv is) defines it: the POSIX platform with a thread pool. The other platform libraries
// (skv::memory, the OPFS platform) never do, so linking one of them beside skv::native cannot
// change where a tree opened by path keeps its data; they are used through
// TreeBuilder::with_platform(). A program that links no skv::native and calls
// TreeBuilder::build() must define default_platform() itself (returning null makes build()
// without a platform fail with InvalidArgument) or it does not link.
std::shared_ptr<Platform> default_platform();

}  // namespace skv

#endif  // SKV_PLATFORM_H_
