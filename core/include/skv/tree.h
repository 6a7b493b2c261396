// Tree and TreeBuilder: opening, using and closing an skv database.
//
//   skv::Result<skv::Tree> tree = skv::TreeBuilder().with_path("data/mydb").build();
//   skv::Transaction tx = std::move(tree->begin().value());
//   (void)tx.set("user:001", "Alice");
//   skv::Status s = tx.commit().wait();
//
// A Tree is a handle: copies share one open database, and the database stays open until close()
// is called (by any copy) or the last copy is destroyed. Opening replays the write-ahead log, so
// every commit acknowledged before a crash as durable is there after reopening. Only one Tree may
// have a database open at a time, in any process: a second open fails with Code::Busy.
//
// Background work (flushing memtables, compacting levels, collecting value log garbage) runs on
// the platform's Executor. If writes come in faster than it can keep up, commits are slowed
// (write stalls) so memory stays bounded. A background failure is sticky: later writes fail with
// its cause.
//
// Lifetimes: transactions and iterators may outlive every Tree handle; once the tree is closed
// they answer Closed (iterator.h), and none of them reads freed memory, also when other threads
// close the tree while they run. close() waits for commits in flight, background work and a
// compact_all() or collect_vlog_garbage() running on another thread (which stops at its next
// step).
//
// Thread safety: a Tree may be used from many threads at once.

#ifndef SKV_TREE_H_
#define SKV_TREE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skv/future.h"
#include "skv/options.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "skv/transaction.h"

namespace skv {

class TreeImpl;

// Counters describing a tree's current shape, for tools and tests.
struct TreeStats {
  uint64_t last_sequence = 0;   // sequence number of the newest visible commit
  uint64_t memtable_bytes = 0;  // active memtable
  // Entries (versions and deletes included) in the memtables, active and frozen, and in the
  // tables of the current version: with no overwrites, deletes or versions, the number of keys.
  uint64_t memtable_entries = 0;
  uint64_t table_entries = 0;
  int immutable_memtables = 0;  // frozen, waiting to be flushed
  // Flush and compaction tasks queued or running. With no frozen memtable either, the tree has
  // no background work left (tools wait for this before measuring the next phase).
  int background_jobs = 0;
  int files_per_level[16] = {};  // SSTables per level (L0 first)
  uint64_t bytes_per_level[16] = {};
  int level_count = 0;
  uint64_t flushes = 0;                 // memtable flushes completed since open
  uint64_t compactions = 0;             // compactions completed since open
  uint64_t compaction_steps = 0;        // steps they ran in (> compactions when run in steps)
  uint64_t stalls = 0;                  // commits that waited for background work
  uint64_t block_cache_usage = 0;       // bytes held by the block cache
  uint64_t block_cache_scan_usage = 0;  // of which counts' blocks (a quarter at most)
  // Memory set aside for the cache's blocks: the chunks of the platform's memory blocks (huge
  // pages natively) they are read into, at most 17/16 of the capacity; 0 where the platform has
  // none to offer (wasm) or the cache is below about 4 MiB (docs/memory.md).
  uint64_t block_cache_pool_bytes = 0;
  uint64_t commits = 0;        // commits written to the WAL since open
  uint64_t commit_groups = 0;  // WAL writes that carried them (group commit: <= commits)
  uint64_t wal_syncs = 0;      // WAL syncs issued for Immediate commits
  // The value log (docs/vlog.md), as the current version records it.
  uint64_t vlog_files = 0;           // value log files the tree points into
  uint64_t vlog_bytes = 0;           // their size
  uint64_t vlog_garbage_bytes = 0;   // entry bytes in them no table points at any more
  uint64_t vlog_gc_runs = 0;         // garbage collection jobs completed since open
  uint64_t vlog_gc_bytes_moved = 0;  // value log bytes they rewrote
  uint64_t vlog_cache_usage = 0;     // bytes held by the value cache
};

// What Tree::verify() found in one file of the database.
struct VerifiedFile {
  std::string name;    // "000012.sst", "000014.vlog", "000015.wal", "MANIFEST-000013", "CURRENT"
  std::string kind;    // "table", "value log", "wal", "manifest", "current"
  uint64_t bytes = 0;  // bytes read
  uint64_t units = 0;  // entries (tables, value logs) or records (WAL, manifest) checked
  // OK, or the first damage found: Corruption naming the file and the offset, or the named
  // error of a key that does not open it (encrypted databases).
  Status status;
  // What else a reader should know: "removed during the check" (a WAL segment or manifest that
  // a flush or a new manifest retired meanwhile, which is not damage), "ends in a torn record at
  // offset N" (the newest WAL segment or the manifest while it is written).
  std::string note;
};

struct VerifyReport {
  std::vector<VerifiedFile> files;  // tables, value logs, WAL segments, manifest, CURRENT
  uint64_t bytes = 0;               // over every file
  // The files whose status is not OK.
  size_t damaged() const {
    size_t n = 0;
    for (const auto& f : files) n += f.status.ok() ? 0 : 1;
    return n;
  }
  bool ok() const { return damaged() == 0; }
};

struct VerifyOptions {
  // Called with the bytes read so far and the total to read: after each file, and every few MiB
  // inside a large one. Runs on the caller's thread.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

class Tree {
 public:
  explicit Tree(std::shared_ptr<TreeImpl> impl);
  Tree(const Tree&) = default;
  Tree& operator=(const Tree&) = default;
  Tree(Tree&&) noexcept = default;
  Tree& operator=(Tree&&) noexcept = default;
  ~Tree();

  // Starts a read-write transaction on a snapshot of the current state.
  Result<Transaction> begin() const;
  // Starts a transaction in the given mode.
  Result<Transaction> begin_with_mode(Mode mode) const;

  // One-call reads and writes, for code that needs no transaction of its own. Each is a
  // transaction by itself: get() reads the newest committed value (nullopt if the key is absent);
  // set() and del() are blind writes (Mode::WriteOnly: the last writer wins, they never
  // conflict) committed with the tree's default durability, and return once the commit is done
  // with its outcome. A transaction that wrote the same key and commits after them gets
  // Conflict, as with any other commit. Same key and value limits as Transaction.
  Result<std::optional<std::string>> get(std::string_view key) const;
  Status set(std::string_view key, std::string_view value) const;
  Status del(std::string_view key) const;

  // Freezes the active memtable and writes it to an L0 table; the future completes when that
  // table is durable and recorded (OK at once if the memtable is empty).
  Future<Status> flush() const;
  // Compacts every level down to the last non-empty one and waits for it. For tools and tests.
  // Runs in steps of a few MiB of input; a close() on another thread stops it at the next step
  // (its partial outputs are removed) and it returns Closed.
  Status compact_all() const;

  // Collects value log garbage now, on the caller's thread (background work does the same
  // between compactions). Rewrites, one table at a time, every value log file whose garbage
  // share (entry bytes no table of the current version points at, over all its entry bytes)
  // reaches Options::vlog_gc_ratio, until no file does: each table that points into such a file
  // is compacted in place and the values it still needs are copied to a new value log file.
  // Then removes every value log file that no version in use points into; a file an open
  // iterator (or a snapshot's iterator) still reads stays until that iterator is gone and the
  // next flush, compaction or collect_vlog_garbage() runs. Versions kept for open snapshots are
  // kept, and their values moved. OK when done (also when there is nothing to do or the value
  // log was never used); Closed if close() on another thread stops it (at its next step); the
  // background error if background work failed.
  Status collect_vlog_garbage() const;

  // Key rotation for an encrypted database (docs/encryption.md, "Rotation"): rewrites every file
  // sealed under a key other than the key manager's active one, on the caller's thread (tables
  // compacted in place one at a time, value log entries copied, the memtable flushed, a new
  // manifest), so the old keys can be dropped from the key manager afterwards. Files an open
  // iterator still reads stay until it is gone. Encryption/NotEncrypted for a plaintext
  // database; Closed if close() on another thread stops it.
  Status rewrite_with_active_key() const;

  // Writes a consistent copy of the database into `path`, a directory (natively) or database
  // name (in the browser) where nothing exists yet, while commits go on (docs/cli.md,
  // "Checkpoints"). The copy holds exactly the commits acknowledged before the call and possibly
  // some of those made during it, always a prefix in commit order; it opens as a database of its
  // own (the same options, versioning and encryption: an encrypted database's checkpoint is
  // sealed under the same keys). It costs one flush of the memtable; tables and value log files
  // are hard links where the platform allows (one file system natively), else copies; the
  // manifest is new. A read-only tree takes no flush: its WAL segments are copied too, which also
  // makes a checkpoint of a read-only tree a restore (skv restore).
  // InvalidArgument if something exists at `path` (nothing is created or changed then); a
  // failure part-way removes the files written and leaves `path` without CURRENT, which no open
  // takes for a database. Closed if close() on another thread stops it (between two files).
  Status checkpoint(const std::string& path) const;

  // Reads every byte of every live file and checks it (docs/cli.md, "Verify"), on the caller's
  // thread, while the tree stays in use: every block of every table (checksum or seal, then each
  // entry's order and the counts and key range the table's properties and the manifest record),
  // every entry of every value log (checksum or seal, count), every record of the WAL segments
  // still needed and of the manifest (checksum or seal, then its contents decoded), and CURRENT
  // (its name, and its seal when encrypted). Damage does not stop it: each file gets its own
  // entry in the report. The tree's caches are neither used nor filled, so cached blocks do not
  // hide damage on disk. Errors: Closed (also when close() on another thread stops it, between
  // two files).
  Result<VerifyReport> verify(const VerifyOptions& options = {}) const;

  TreeStats stats() const;
  // The options the tree was opened with.
  const Options& options() const;
  // Whether the database is versioned and its retention, as stored in it (these may differ from
  // options().versioning, which may be unset).
  Versioning versioning() const;

  // Waits for commits in flight, stops background work, syncs the WAL and releases the
  // database. Later calls on this tree (or its transactions) return Code::Closed. Idempotent
  // (a second call returns OK). If a WAL write or sync failed earlier, close does not sync the
  // WAL (its unsynced bytes are of unknown fate) and returns that error: Eventual commits
  // acknowledged since the last successful sync may be lost.
  Status close() const;

 private:
  std::shared_ptr<TreeImpl> impl_;
};

// Collects options and opens a tree. Every with_* returns *this so calls chain.
// Thread safety: a builder is used by one thread. Copyable.
class TreeBuilder {
 public:
  TreeBuilder() = default;

  TreeBuilder& with_path(std::string path);
  TreeBuilder& with_platform(std::shared_ptr<Platform> platform);
  TreeBuilder& with_create_if_missing(bool create);
  // Options::read_only.
  TreeBuilder& with_read_only(bool read_only);
  TreeBuilder& with_file_mode(uint32_t mode);
  TreeBuilder& with_memtable_size(size_t bytes);
  TreeBuilder& with_max_immutable_memtables(int count);
  TreeBuilder& with_block_size(size_t bytes);
  TreeBuilder& with_block_cache_capacity(size_t bytes);
  TreeBuilder& with_compression(Compression compression);
  TreeBuilder& with_flush_compression(Compression compression);
  TreeBuilder& with_compression_start_level(int level);
  TreeBuilder& with_bloom_bits_per_key(int bits);
  TreeBuilder& with_level_count(int levels);
  TreeBuilder& with_level_base_bytes(uint64_t bytes);
  TreeBuilder& with_level_multiplier(int multiplier);
  TreeBuilder& with_target_file_size(uint64_t bytes);
  TreeBuilder& with_compaction_step_bytes(uint64_t bytes);
  TreeBuilder& with_l0_compaction_trigger(int files);
  TreeBuilder& with_default_durability(Durability durability);
  TreeBuilder& with_commit_pipeline(CommitPipeline pipeline);
  // Versioned queries (docs/versioning.md): every write keeps its timestamp, and compaction
  // keeps the versions of the last `retention_ns` nanoseconds (0: for ever). Stored in the
  // database when it is created; see Options::versioning for opening an existing one.
  TreeBuilder& with_versioning(bool enabled, uint64_t retention_ns);
  // Encryption at rest (docs/encryption.md; Options::key_manager says how an existing database
  // is treated). `preference` Auto takes XChaCha20-Poly1305; CipherSuite::Aes256Gcm is an explicit
  // native choice, refused with NotSupported where the CPU cannot run it. A build without
  // encryption (SKV_ENCRYPTION=OFF) refuses a key manager with InvalidArgument. Either way a
  // refused open creates and changes nothing.
  TreeBuilder& with_encryption(std::shared_ptr<KeyManager> keys,
                               CipherPreference preference = CipherPreference::Auto);
  TreeBuilder& with_encryption(std::shared_ptr<KeyManager> keys, CipherSuite cipher);
  // Key-value separation (docs/vlog.md; the fields of Options say what each one means). Off by
  // default. build() checks them: a threshold outside [1 byte, kMaxValueSize], a file size
  // below 4 KiB, or a garbage ratio outside (0, 1] is InvalidArgument naming the option.
  TreeBuilder& with_enable_vlog(bool enable);
  TreeBuilder& with_vlog_value_threshold(size_t bytes);
  TreeBuilder& with_vlog_max_file_size(uint64_t bytes);
  TreeBuilder& with_vlog_gc_ratio(double ratio);
  TreeBuilder& with_vlog_cache_capacity(size_t bytes);
  TreeBuilder& with_options(Options options);

  const Options& options() const { return options_; }

  // Opens (or creates) the tree. InvalidArgument for bad options (named), Busy if the database
  // is open elsewhere, Corruption (naming the file and offset) if stored data fails its checks.
  // Without create_if_missing, a path that holds no skv database is NotFound naming it, and
  // nothing is created there.
  //
  // The platform: the one given to with_platform(), else default_platform(), which only
  // skv::native defines (POSIX files: a path is a directory). An in-memory tree is always asked
  // for by name: with_platform(std::make_shared<MemoryPlatform>()). Linking skv::memory never
  // changes what a path means. In a program without skv::native (the browser build, tests on
  // the in-memory platform), build() with no platform fails with InvalidArgument.
  Result<Tree> build() const {
    if (options_.platform) return open(options_);
    Options with_default = options_;
    with_default.platform = default_platform();
    return open(with_default);
  }

 private:
  // Opens a tree. REQUIRES: options.platform is set (InvalidArgument otherwise).
  static Result<Tree> open(const Options& options);

  Options options_;
};

}  // namespace skv

#endif  // SKV_TREE_H_
