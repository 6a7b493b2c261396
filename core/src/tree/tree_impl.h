// TreeImpl: the orchestrator behind skv::Tree. It owns the storage, the memtables, the WAL, the
// version set and the caches, runs the commit pipeline and schedules flushes and compactions.
//
// Locks, in the order they may be taken:
//   commit_mu_  validation and sequence assignment (short)
//   queue_mu_   the commit queue and the leader flag
//   mu_         memtable switch, immutable queue, version set, background state
//   view_mu_    the published ReadView pointer (held only to copy a shared_ptr)
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
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/block_cache.h"
#include "compaction/compaction_job.h"
#include "compaction/compaction_picker.h"
#include "format/internal_key.h"
#include "iterator/user_iterator.h"
#include "memtable/memtable.h"
#include "skv/future.h"
#include "skv/options.h"
#include "skv/platform.h"
#include "skv/tree.h"
#include "txn/snapshot_registry.h"
#include "txn/write_buffer.h"
#include "version/table_cache.h"
#include "version/version.h"
#include "version/version_set.h"
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
  SequenceNumber version_max_seq = 0;  // largest sequence number in any table of `version`
};

class TreeImpl : public std::enable_shared_from_this<TreeImpl> {
 public:
  // Opens or creates the tree described by `options` (recovering the WAL).
  static Result<std::shared_ptr<TreeImpl>> open(const Options& options);
  ~TreeImpl();
  TreeImpl(const TreeImpl&) = delete;
  TreeImpl& operator=(const TreeImpl&) = delete;

  const Options& options() const { return options_; }

  // --- used by transactions ---
  Result<std::unique_ptr<TransactionImpl>> begin(Mode mode);
  // OK while open; Closed after close().
  Status check_open() const;
  void release_snapshot(SequenceNumber seq) { snapshots_.release(seq); }
  // The newest version of `key` at `snapshot`: *found false if none or deleted.
  Status get(std::string_view key, SequenceNumber snapshot, std::string* value, bool* found);
  // An iterator over the tree at `snapshot`, user keys in [lower, upper). Without `fill_cache`
  // the blocks it reads are not added to the block cache (a one-off sweep, such as a count,
  // would otherwise evict the blocks point reads keep hot).
  Result<std::unique_ptr<UserIterator>> new_iterator(SequenceNumber snapshot, std::string lower,
                                                     std::string upper, bool keys_only,
                                                     bool fill_cache = true);
  // Validates, sequences and queues the transaction's writes (see commit/ and DESIGN.md §3).
  CommitFuture commit(const TransactionImpl& txn);

  // --- used by Tree ---
  Future<Status> flush();
  Status compact_all();
  TreeStats stats();
  Status close();

 private:
  struct ImmEntry {
    std::shared_ptr<MemTable> mem;
    uint64_t wal_number = 0;  // the WAL segment holding exactly this memtable's writes
    std::vector<Promise<Status>> flush_waiters;
  };
  struct CommitRequest;

  explicit TreeImpl(const Options& options);

  // open / recovery (tree_open.cpp)
  Status open_impl();
  Status recover_wal(std::vector<uint64_t> wal_numbers);
  Status replay_segment(uint64_t number, bool last, std::shared_ptr<MemTable>* mem);
  Status new_wal_segment();
  // Completes every flush waiter with `s` (called once background work stops on an error).
  // REQUIRES: lock holds mu_; it is released while the waiters run.
  void fail_flush_waiters(std::unique_lock<std::mutex>& lock, const Status& s);
  // Memtables grow in arena blocks of an eighth of the memtable size (4 KiB to 256 KiB), so a
  // small memtable is not "full" after its first block.
  size_t arena_block_size() const {
    return std::clamp<size_t>(options_.memtable_size / 8, 4096, 256 * 1024);
  }
  void delete_obsolete_files();  // REQUIRES: mu_ held

  // reads (tree_read.cpp)
  std::shared_ptr<const ReadView> current_view() const;
  void install_view();  // REQUIRES: mu_ held

  // commit pipeline (tree_commit.cpp)
  Status validate(const TransactionImpl& txn, const ReadView& view);
  // Runs the leader now (CommitPipeline::Inline) or schedules it on the executor (Deferred).
  void start_leader();
  // The context of a flush or compaction job. REQUIRES: mu_ held.
  JobContext job_context();
  // Runs a step of `job` (reading about `budget` input bytes; 0: to the end) without mu_. When
  // the job is done, logs its edit and resets `job`; on failure sets the sticky background
  // error, resets `job` (removing its outputs) and returns the error. *done tells whether the
  // job finished. REQUIRES: lock holds mu_ (released while the step runs).
  Status compact_step(std::unique_ptr<CompactionJob>& job, uint64_t budget,
                      std::unique_lock<std::mutex>& lock, bool* done);
  void run_leader();
  Status write_group(std::vector<std::shared_ptr<CommitRequest>>& group);
  Status make_room_for_write(bool force);
  Status switch_memtable();  // REQUIRES: called by the leader
  void finish_inflight(const CommitRequest& req);

  // background work (tree_background.cpp)
  void maybe_schedule_work();  // REQUIRES: mu_ held
  void flush_task();
  void compaction_task();
  bool needs_compaction() const;  // REQUIRES: mu_ held
  void wait_for_background(std::unique_lock<std::mutex>& lock);
  void set_background_error(const Status& s);  // REQUIRES: mu_ held
  void help_background();  // runs queued tasks when the executor is not concurrent

  const Options options_;
  std::shared_ptr<Platform> platform_;
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<BlockCache> block_cache_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<VersionSet> versions_;
  SnapshotRegistry snapshots_;

  std::atomic<bool> closed_{false};
  std::atomic<SequenceNumber> visible_seq_{0};

  // commit_mu_
  std::mutex commit_mu_;
  SequenceNumber last_allocated_seq_ = 0;
  std::unordered_map<std::string, SequenceNumber> inflight_;  // key -> seq, queued not visible

  // queue_mu_
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<CommitRequest>> queue_;
  bool leader_active_ = false;   // a leader runs or is scheduled; commits just queue
  bool leader_running_ = false;  // run_leader() is draining the queue on some thread
  bool queue_closed_ = false;

  // Owned by the leader (the thread running run_leader), or by open/close when none runs.
  std::unique_ptr<log::Writer> wal_;
  uint64_t wal_number_ = 0;

  // mu_
  mutable std::mutex mu_;
  std::condition_variable bg_cv_;
  std::shared_ptr<MemTable> mem_;
  std::deque<ImmEntry> imms_;  // oldest first
  bool flush_scheduled_ = false;
  bool compaction_scheduled_ = false;
  bool manual_compaction_ = false;
  // A background compaction between two of its steps (Options::compaction_step_bytes).
  std::unique_ptr<CompactionJob> bg_job_;
  bool closing_ = false;
  Status bg_error_;
  std::set<uint64_t> obsolete_tables_;
  uint64_t flushes_ = 0, compactions_ = 0, compaction_steps_ = 0, stalls_ = 0;
  // Written by the commit leader only; read by stats().
  std::atomic<uint64_t> commits_{0}, commit_groups_{0}, wal_syncs_{0};

  // view_mu_
  mutable std::mutex view_mu_;
  std::shared_ptr<const ReadView> view_;
};

}  // namespace skv

#endif  // SKV_TREE_TREE_IMPL_H_
