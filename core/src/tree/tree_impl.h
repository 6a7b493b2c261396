// TreeImpl: the orchestrator behind skv::Tree. It owns the storage, the memtables, the WAL, the
// version set and the caches, hosts the commit pipeline (commit/commit_pipeline.h, as its
// CommitEnv) and the transactions (txn/transaction_host.h), and schedules flushes and
// compactions.
//
// Locks, in the order they may be taken:
//   the pipeline's commit and queue locks (commit/commit_pipeline.h)
//   mu_         memtable switch, immutable queue, version set, background state, sticky error
//   view_'s stripe locks: the published ReadView pointer (held only to copy a shared_ptr;
//               util/striped_ptr.h)
// The commit leader is the only thread that appends to the WAL or inserts into the active
// memtable; it never holds mu_ while doing so. Background work (flush, compaction) runs on the
// platform's Executor and holds mu_ only to pick work and to install results.
//
// Thread safety: every public method may be called from many threads at once.

#ifndef SKV_TREE_TREE_IMPL_H_
#define SKV_TREE_TREE_IMPL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "commit/commit_pipeline.h"
#include "compaction/compaction_job.h"
#include "compaction/compaction_picker.h"
#include "crypto/cipher_source.h"
#include "format/internal_key.h"
#include "iterator/user_iterator.h"
#include "memtable/memtable.h"
#include "skv/future.h"
#include "skv/options.h"
#include "skv/platform.h"
#include "skv/tree.h"
#include "txn/snapshot_registry.h"
#include "txn/transaction_host.h"
#include "util/striped_ptr.h"
#include "version/table_cache.h"
#include "version/version.h"
#include "version/version_set.h"
#include "version/vlog_cache.h"
#include "wal/log_writer.h"

namespace skv {

class TransactionImpl;

// What a read needs, captured at once: the active memtable, the frozen ones (newest first) and
// the current version. Published as an immutable shared object; a reader keeps it for the
// length of one read or one iterator.
struct ReadView {
  std::shared_ptr<MemTable> mem;
  std::vector<std::shared_ptr<MemTable>> imms;  // newest first
  std::shared_ptr<const Version> version;
  SequenceNumber version_max_seq = 0;     // largest sequence number in any table of `version`
  std::shared_ptr<VlogCache> vlog_cache;  // reads the values `version`'s tables point at
};

class TreeImpl final : public std::enable_shared_from_this<TreeImpl>,
                       public TransactionHost,
                       public commit::CommitEnv {
 public:
  // Opens or creates the tree described by `options` (recovering the WAL).
  static Result<std::shared_ptr<TreeImpl>> open(const Options& options);
  ~TreeImpl() override;
  TreeImpl(const TreeImpl&) = delete;
  TreeImpl& operator=(const TreeImpl&) = delete;

  const Options& options() const { return options_; }
  Versioning versioning() const { return versioning_; }

  // --- used by Tree ---
  Result<std::unique_ptr<TransactionImpl>> begin(Mode mode);
  Future<Status> flush();
  Status compact_all();
  Status collect_vlog_garbage();     // Tree::collect_vlog_garbage
  Status rewrite_with_active_key();  // Tree::rewrite_with_active_key (tree_keys.cpp)
  // Waits for `f`. On an executor that is not concurrent (the browser's, a test's queue) it runs
  // queued tasks meanwhile, since nothing else would; IO if the queue runs dry first.
  Status await(const Future<Status>& f);
  TreeStats stats();
  Status close();

  Status checkpoint(const std::string& path);  // Tree::checkpoint (tree_checkpoint.cpp)
  Result<VerifyReport> verify(const VerifyOptions& options);  // Tree::verify (tree_verify.cpp)

  // --- TransactionHost (txn/transaction_host.h) ---
  Status check_open() const override;
  // ReadOnly naming `what` when the tree was opened read-only (Options::read_only).
  Status check_writable(const char* what) const;
  void release_snapshot(SequenceNumber seq) override { snapshots_.release(seq); }
  Status get(std::string_view key, SequenceNumber snapshot, std::string* value,
             bool* found) override;
  Future<Result<std::optional<std::string>>> get_async(std::string key,
                                                       SequenceNumber snapshot) override;
  // A count or other one-off sweep passes !fill_cache: its blocks go to the block cache's scan
  // pool, so it evicts at most a quarter of the blocks point reads keep hot.
  Result<std::unique_ptr<UserIterator>> new_iterator(SequenceNumber snapshot, std::string lower,
                                                     std::string upper, bool keys_only,
                                                     bool fill_cache) override;
  bool versioned() const override { return versioning_.enabled; }
  Result<std::unique_ptr<UserIterator>> new_time_iterator(SequenceNumber snapshot,
                                                          std::string lower, std::string upper,
                                                          const TimeQuery& query) override;
  CommitFuture commit(WriteBatch batch, SequenceNumber snapshot, bool check_conflicts,
                      bool sync) override;

 private:
  struct ImmEntry {
    std::shared_ptr<MemTable> mem;
    uint64_t wal_number = 0;  // the WAL segment holding exactly this memtable's writes
    std::vector<Promise<Status>> flush_waiters;
  };
  explicit TreeImpl(const Options& options);

  // One count of file_readers_ for a checkpoint() or verify() call, released (waking close())
  // when it goes. REQUIRES: constructed with mu_ held; destroyed without it.
  class FileReaderScope {
   public:
    explicit FileReaderScope(TreeImpl* t) : t_(t) { ++t_->file_readers_; }
    FileReaderScope(const FileReaderScope&) = delete;
    FileReaderScope& operator=(const FileReaderScope&) = delete;
    ~FileReaderScope();

   private:
    TreeImpl* const t_;
  };

  // --- CommitEnv (commit/commit_pipeline.h), tree_commit.cpp ---
  Status write_error() override;
  uint64_t now_nanos() override { return platform_->clock().now_nanos(); }
  Result<SequenceNumber> newest_sequence(std::string_view key, SequenceNumber snapshot) override;
  Status make_room(bool force) override { return make_room_for_write(force); }
  Status write_wal(const std::vector<std::string_view>& records, bool sync) override;
  void apply(std::string_view record) override;
  void fail(const Status& s) override;
  void schedule(std::function<void()> task) override;

  // open / recovery (tree_open.cpp)
  Status open_impl();
  Status recover_wal(std::vector<uint64_t> wal_numbers);
  Status replay_segment(uint64_t number, bool last, std::shared_ptr<MemTable>* mem);
  Status new_wal_segment();
  // Completes every flush waiter with `s` (called once background work stops on an error).
  // REQUIRES: lock holds mu_; it is released while the waiters run.
  void fail_flush_waiters(std::unique_lock<std::mutex>& lock, const Status& s);
  // Memtables grow in arena blocks of an eighth of the memtable size (4 KiB to 256 KiB), so a
  // small memtable is not "full" after its first block; a memtable of at least 16 of the
  // platform's preferred blocks (32 MiB for 2 MiB) uses those instead.
  size_t arena_block_size() const {
    const size_t preferred = memory_blocks_->preferred_block_size();
    if (preferred > 0 && options_.memtable_size / 16 >= preferred) return preferred;
    return std::clamp<size_t>(options_.memtable_size / 8, 4096, 256 * 1024);
  }
  // A memtable's key index starts sized for one key per KiB of the memtable size (1 MiB of slots
  // for the default 64 MiB), or for as many keys as the memtable it replaces held, so a steady
  // workload does not grow it again. REQUIRES: mu_ held, or the tree not yet shared.
  std::shared_ptr<MemTable> new_memtable() const {
    size_t expected_keys = options_.memtable_size / 1024;
    if (mem_ != nullptr) expected_keys = std::max(expected_keys, mem_->distinct_keys());
    return std::make_shared<MemTable>(arena_block_size(), expected_keys, memtable_blocks_);
  }
  void delete_obsolete_files();  // REQUIRES: mu_ held

  // reads (tree_read.cpp)
  std::shared_ptr<const ReadView> current_view() const;
  // Every entry of the view's memtables and tables, merged. REQUIRES: check_open() passed.
  // With `only_key`, the caller reads that user key alone: memtables and tables whose filters
  // rule it out are left out, and an error opening a table is an iterator with that status.
  std::unique_ptr<InternalIterator> merged_input(
      const ReadView& v, bool fill_cache,
      std::optional<std::string_view> only_key = std::nullopt) const;
  // Wraps `it` so it keeps `v` alive and stops at close().
  std::unique_ptr<UserIterator> pin(std::shared_ptr<const ReadView> v,
                                    std::unique_ptr<UserIterator> it) const;
  // Checks the stored versioning against Options::versioning and records a new retention.
  // Runs before anything is written at open.
  Status check_versioning();
  void install_view();  // REQUIRES: mu_ held

  // The context of a flush or compaction job. REQUIRES: mu_ held.
  JobContext job_context();
  // Runs a step of `job` (reading about `budget` input bytes; 0: to the end) without mu_. When
  // the job is done, logs its edit and resets `job`; on failure sets the sticky background
  // error, resets `job` (removing its outputs) and returns the error. *done tells whether the
  // job finished. REQUIRES: lock holds mu_ (released while the step runs).
  Status compact_step(std::unique_ptr<CompactionJob>& job, uint64_t budget,
                      std::unique_lock<std::mutex>& lock, bool* done);
  // Takes compaction over from the background for a manual run (compact_all,
  // collect_vlog_garbage): waits for a running compaction and keeps new ones from starting.
  // Closed or the background error if the tree cannot compact. REQUIRES: lock holds mu_.
  Status begin_manual_compaction(std::unique_lock<std::mutex>& lock, const Status& closing);
  // Runs `job` to its end in steps, looking at closing_ between them (a dropped job removes its
  // outputs). REQUIRES: lock holds mu_ and manual_compaction_ is set.
  Status run_manual_job(std::unique_ptr<CompactionJob>& job, std::unique_lock<std::mutex>& lock,
                        const Status& closing);
  // Hands compaction back to the background after a manual run. REQUIRES: mu_ held.
  void end_manual_compaction();
  // Freezes the memtable when it is full (or, with `force`, when it is not empty), stalling
  // while background work is too far behind. REQUIRES: called by the commit leader.
  Status make_room_for_write(bool force);
  Status switch_memtable();  // REQUIRES: called by the commit leader

  // background work (tree_background.cpp)
  void maybe_schedule_work();  // REQUIRES: mu_ held
  void flush_task();
  void compaction_task();
  bool needs_compaction() const;  // REQUIRES: mu_ held
  // The next background compaction: a level's, else a value log garbage collection step; null if
  // none is needed. REQUIRES: mu_ held.
  std::unique_ptr<Compaction> pick_background_compaction();
  void wait_for_background(std::unique_lock<std::mutex>& lock);
  void set_background_error(const Status& s);  // REQUIRES: mu_ held
  // Encryption at open (tree_open.cpp): decides from CURRENT whether the database is encrypted
  // and sets keyring_, refusing by name before anything is written.
  Status setup_encryption();
  // Checks that the key manager opens every live table and value log, before anything is
  // written (UnknownKeyId, WrongKey, ... by name).
  Status check_live_file_keys();
  // The decoded header of one of the database's files (tables and value logs).
  Result<FileHeader> read_file_header(const std::string& name, FileKind kind);
  // The cipher of a new file (null for a plaintext database).
  Result<std::shared_ptr<const crypto::FileCipher>> new_file_cipher(FileKind kind, uint64_t number,
                                                                    const std::string& name);

  const Options options_;
  // What the database stores (set at open, then fixed): whether it is versioned, the retention.
  Versioning versioning_;
  std::shared_ptr<Platform> platform_;
  std::shared_ptr<MemoryBlocks> memory_blocks_;  // platform_->memory_blocks(), set at open
  // The memtables' blocks: memory_blocks_, with the blocks of flushed memtables kept for the
  // next ones, up to memtable_size (memtable/recycled_blocks.h). Set at open.
  std::shared_ptr<MemoryBlocks> memtable_blocks_;
  std::unique_ptr<Storage> storage_;
  // The ciphers of an encrypted database (null for a plaintext one), set at open before any file
  // is read. Declared before the caches, which refer to it, so it outlives them.
  std::shared_ptr<crypto::Keyring> keyring_;
  // Shared with every Version (and so with every iterator, which pins its Version): an iterator
  // that outlives the tree never reads freed memory (tree.h, "Lifetimes").
  std::shared_ptr<BlockCache> block_cache_;
  std::shared_ptr<TableCache> table_cache_;
  // Shared with every ReadView and every iterator that reads values from the value log, for the
  // same reason. Set at open and never reset: close() only closes it.
  std::shared_ptr<VlogCache> vlog_cache_;
  std::unique_ptr<VersionSet> versions_;
  SnapshotRegistry snapshots_;

  // Set by close(). Shared with every iterator, which checks it on each move (tree.h).
  const std::shared_ptr<std::atomic<bool>> closed_ = std::make_shared<std::atomic<bool>>(false);
  std::unique_ptr<commit::CommitPipeline> pipeline_;

  // Owned by the commit leader, or by open/close when none runs.
  std::unique_ptr<log::Writer> wal_;
  // Room a WAL segment keeps reserved past its last record (log::Writer::reserve_ahead): one
  // extension of the file per MiB of commits where the platform reserves (OPFS).
  static constexpr uint64_t kWalRoomStep = uint64_t{1} << 20;
  uint64_t wal_number_ = 0;
  // A write or sync of wal_ failed: its unsynced bytes are of unknown fate, and it is never
  // synced again (CommitEnv::fail). Guarded by mu_.
  bool wal_failed_ = false;

  // mu_
  mutable std::mutex mu_;
  std::condition_variable bg_cv_;
  std::shared_ptr<MemTable> mem_;
  std::deque<ImmEntry> imms_;  // oldest first
  bool flush_scheduled_ = false;
  bool compaction_scheduled_ = false;
  bool manual_compaction_ = false;  // compact_all() runs (close() waits for it)
  // checkpoint() and verify() calls reading files on their callers' threads (close() waits for
  // them; they stop between two files once closing_ is set).
  int file_readers_ = 0;
  // Input bytes compact_all() reads between two looks at closing_.
  static constexpr uint64_t kManualCompactionStepBytes = 4u << 20;
  // Value log files kept open for reads.
  static constexpr size_t kMaxOpenVlogs = 256;
  // A background compaction between two of its steps (Options::compaction_step_bytes).
  std::unique_ptr<CompactionJob> bg_job_;
  bool closing_ = false;
  Status bg_error_;
  std::set<uint64_t> obsolete_tables_;
  // Value logs no longer in the current version (or orphans found at open), removed once no live
  // version has them.
  std::set<uint64_t> obsolete_vlogs_;
  uint64_t flushes_ = 0, compactions_ = 0, compaction_steps_ = 0, stalls_ = 0;
  uint64_t vlog_gc_runs_ = 0, vlog_gc_bytes_moved_ = 0;

  // The published ReadView, one copy per stripe of readers.
  StripedPtr<ReadView> view_;
};

}  // namespace skv

#endif  // SKV_TREE_TREE_IMPL_H_
