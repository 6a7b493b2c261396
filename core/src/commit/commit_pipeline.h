// CommitPipeline: turns transactions' write batches into commits that are durable (when asked),
// visible in sequence order, and checked for write-write conflicts. It owns sequence numbers, the
// set of keys in flight, the queue, leader election, group formation, the published visible
// sequence number and the commit counters; everything else (where versions live, the WAL, the
// memtable, the sticky error) it reaches through a CommitEnv, which the tree implements and a
// test can fake.
//
// The group cycle (docs/commit.md):
//   1. commit() looks the batch's keys up among the committed versions with no lock held, then,
//      under the commit lock, checks the sticky error and the keys of the commits since (the
//      in-flight set; first committer wins: a key written by a commit after the transaction's
//      snapshot is a conflict), assigns the next sequence number and the commit timestamp (the
//      env's clock, but always above the previous commit's, so commit timestamps rise with sequence
//      numbers even when the clock steps back), marks the keys in flight and queues the request.
//      Queue order is sequence order.
//   2. A leader (the committing thread that found none running, or an executor task when the
//      pipeline is deferred) takes the queued requests as a group (up to kMaxGroupBytes), asks
//      the env to make room, appends the group to the WAL (one write per MiB) and at most one sync
//      (if any member asked for it), applies each batch, publishes the group's last sequence
//      number (a snapshot always sees a prefix of the commit order), takes the keys out of
//      flight and completes the futures, waking their waiters with one call per WakeGroup (the
//      commits queued between two groups being taken share one). It repeats until the queue is
//      empty.
//      A committing thread that leads takes a bounded turn: once it has led for kLeaderTurn it
//      asks for a successor, and the next thread that queues a commit takes over (waiting for
//      the current group to finish) while the old leader returns. So no commit() call is held
//      much longer than a turn however busy the queue stays; while no thread comes to take over,
//      the leader goes on. (A handover costs a wake-up of a thread that may wait behind the ones
//      the last group woke, which is why a turn spans many groups.)
//   3. A barrier (a flush) queues like a commit and runs alone on the leader, between groups.
//   4. A failed WAL write or sync fails its group and goes to CommitEnv::fail(): the sticky
//      error fails every later commit. The failed group's outcome is unknown (its bytes may or
//      may not have reached the disk); it is never retried.
//
// Locks: the commit lock (commit_mu_) guards sequence allocation and the in-flight set; the
// queue lock (queue_mu_) the queue and the leader flags; commit_mu_ may be held when taking
// queue_mu_, never the reverse. Env calls that do I/O (make_room, write_wal, apply) run on the
// leader with neither lock held; write_error() runs under commit_mu_, newest_sequence() on the
// committing thread before it takes the lock (and under it when the in-flight set has forgotten
// commits the first look did not see).
//
// Thread safety: every public method may be called from many threads at once.

#ifndef SKV_COMMIT_COMMIT_PIPELINE_H_
#define SKV_COMMIT_COMMIT_PIPELINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/internal_key.h"
#include "skv/future.h"
#include "skv/status.h"
#include "wal/write_batch.h"

namespace skv::commit {

// What the pipeline needs from the tree around it.
class CommitEnv {
 public:
  virtual ~CommitEnv() = default;

  // OK, or the sticky error that stops writes (a failed WAL write, flush or compaction).
  virtual Status write_error() = 0;

  // The wall clock, in nanoseconds since the Unix epoch. Runs under the commit lock.
  virtual uint64_t now_nanos() = 0;

  // The sequence number of the newest committed version of `key` (0 if none), as far as a
  // transaction that read at `snapshot` needs it: the result is above `snapshot` exactly when a
  // version newer than the snapshot is committed. Runs on committing threads at once, usually
  // with no lock held (sometimes under the commit lock); every batch the pipeline published as
  // visible before the call is visible to it.
  virtual Result<SequenceNumber> newest_sequence(std::string_view key, SequenceNumber snapshot) = 0;

  // Runs on the leader before each group, and for a flush barrier: makes sure the memtable has
  // room (freezing a full one and starting a new WAL segment; it may wait for background work).
  // With `force`, freezes a non-empty memtable whatever its size.
  virtual Status make_room(bool force) = 0;

  // Appends `records` (one encoded WriteBatch per commit) to the WAL, one write per MiB or so
  // (log::Writer::add_records), and syncs it when `sync`.
  virtual Status write_wal(const std::vector<std::string_view>& records, bool sync) = 0;

  // Inserts one committed batch (an encoded WriteBatch with its sequence number) into the
  // memtable.
  virtual void apply(std::string_view record) = 0;

  // The WAL write or sync failed with `s`: make it the sticky error. The WAL's unsynced bytes
  // are of unknown fate; the env must never sync that WAL again (not even at close).
  virtual void fail(const Status& s) = 0;

  // Runs `task` later on the platform's executor (deferred pipelines only). The env must not run
  // it once the pipeline is gone.
  virtual void schedule(std::function<void()> task) = 0;
};

struct CommitCounters {
  uint64_t commits = 0;  // commits written to the WAL
  uint64_t groups = 0;   // WAL writes that carried them (group commit: groups <= commits)
  uint64_t syncs = 0;    // WAL syncs issued (for Immediate members)
};

class CommitPipeline {
 public:
  // A group takes queued commits until it holds at least this many bytes.
  static constexpr size_t kMaxGroupBytes = 8u << 20;
  // A committing thread that leads asks for a successor after this long (step 2 above).
  static constexpr std::chrono::nanoseconds kLeaderTurn = std::chrono::milliseconds(100);

  // `deferred`: the leader always runs as a task given to CommitEnv::schedule(), so a host that
  // runs its executor once per turn of its event loop writes every commit of that turn at once.
  // Otherwise the committing thread that finds no leader leads, for turns of `leader_turn`.
  // `env` must outlive the pipeline.
  CommitPipeline(CommitEnv* env, bool deferred, std::chrono::nanoseconds leader_turn = kLeaderTurn);
  CommitPipeline(const CommitPipeline&) = delete;
  CommitPipeline& operator=(const CommitPipeline&) = delete;
  // REQUIRES: close() returned (or nothing was ever queued).
  ~CommitPipeline();

  // Continues after `last`, the newest sequence number recovery found: it is visible, and the
  // next commit gets last + 1 and a commit timestamp above `last_timestamp`. REQUIRES: nothing
  // queued yet.
  void start_after(SequenceNumber last, uint64_t last_timestamp);

  // Queues `batch` (its sequence number and commit timestamp are assigned here). With
  // `check_conflicts`, a key that another commit wrote after `snapshot`, or that a queued commit
  // writes, fails it with Conflict. The future completes with OK once the batch is visible (and
  // synced when `sync`), or with the error that stopped it (Conflict, Closed, the sticky error,
  // ...), in which case nothing of it was applied. REQUIRES: the batch is not empty.
  CommitFuture commit(WriteBatch batch, SequenceNumber snapshot, bool check_conflicts, bool sync);

  // Queues `fn` to run alone on the leader between groups, with OK, or with the sticky error when
  // writes are stopped. After close() it runs at once on this thread with Closed.
  void barrier(std::function<void(const Status&)> fn);

  // The sequence number of the newest visible commit. Snapshots read it under their registry's
  // lock (txn/snapshot_registry.h), hence the reference.
  const std::atomic<SequenceNumber>& visible() const { return visible_; }
  CommitCounters counters() const;
  // Entries of the in-flight set: the keys of the queued commits, and of applied ones a check may
  // still need (none once every check has finished and a commit has completed since).
  size_t inflight_entries();
  // The commit timestamp given to the newest commit queued (or recovered). Never decreases.
  uint64_t last_timestamp();

  // Refuses later commits and barriers with Closed, runs or waits for the leader until
  // everything queued is done, and returns. Idempotent.
  void close();

 private:
  struct Request;
  using Group = std::vector<std::shared_ptr<Request>>;

  // The conflict check's two parts (commit()): against the versions committed where the env
  // keeps them, with no lock held; then, under commit_mu_, against the in-flight set, for the
  // commits after `checked_through` (the visible sequence number the first part started from).
  Status check_committed(const Request& req, SequenceNumber snapshot);
  Status check_recent(const Request& req, SequenceNumber snapshot, SequenceNumber checked_through);
  static Status conflict(std::string_view key);
  // Drops in-flight entries of applied commits nobody may need: all of them when no other check
  // is between its first look and the lock (`own_checks`: 1 when the caller's commit is such a
  // check, else 0); otherwise, once the set has doubled since the last sweep, those applied by
  // the last sweep. REQUIRES: commit_mu_ held.
  void forget_applied(int own_checks);
  // Drops every entry of a commit up to `seq` (when `seq` is past forgotten_through_, or with
  // `force`) and raises forgotten_through_ to it. REQUIRES: commit_mu_ held; every commit up to
  // `seq` applied.
  void forget_through(SequenceNumber seq, bool force = false);

  // Who runs the leader: the committing thread that found none (its turn is bounded), a
  // committing thread taking over from a leader whose turn is up, or anyone else (a deferred
  // leader task, close()), who leads until the queue is empty.
  enum class Role { Committer, Successor, Drainer };

  void start_leader();
  void run_leader(Role role);
  Status write_group(const Group& group);
  // Completes the group's futures with `s` and wakes their waiters.
  void complete(const Group& group, const Status& s);
  // Takes a queued commit's keys out of the in-flight set (it failed, or it was applied while no
  // check needed them). REQUIRES: commit_mu_ held.
  void finish_inflight(const Request& req);

  CommitEnv* const env_;
  const bool deferred_;
  const std::chrono::nanoseconds leader_turn_;

  // commit_mu_
  std::mutex commit_mu_;
  SequenceNumber last_allocated_ = 0;
  uint64_t last_timestamp_ = 0;
  // A key of the in-flight set, held inside the set's node when it is short (most keys), so an
  // entry costs one allocation rather than a node and a string.
  class InflightKey {
   public:
    explicit InflightKey(std::string_view key) : size_(key.size()) {
      char* to = inline_;
      if (size_ > kInline) {
        heap_ = std::make_unique<char[]>(size_);
        to = heap_.get();
      }
      if (size_ > 0) std::memcpy(to, key.data(), size_);
    }
    InflightKey(const InflightKey&) = delete;
    InflightKey& operator=(const InflightKey&) = delete;
    std::string_view view() const { return {size_ > kInline ? heap_.get() : inline_, size_}; }
    operator std::string_view() const { return view(); }

   private:
    static constexpr size_t kInline = 40;
    size_t size_;
    std::unique_ptr<char[]> heap_;
    char inline_[kInline];
  };
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>()(key); }
    size_t operator()(const InflightKey& key) const { return (*this)(key.view()); }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  // key -> the newest commit that writes it, queued or applied, among the commits after
  // forgotten_through_ (looked up by string_view, no copies). A failed commit's keys leave at
  // once; an applied commit's when the leader applies it while no check is counted, or later in
  // forget_applied().
  std::unordered_map<InflightKey, SequenceNumber, KeyHash, KeyEqual> inflight_;
  // Commits up to this one may have left the set (all of them applied): a check that started
  // from an older visible sequence number looks its keys up again under the lock.
  SequenceNumber forgotten_through_ = 0;
  SequenceNumber sweep_mark_ = 0;  // visible at the last sweep: the next one forgets up to it
  size_t queued_keys_ = 0;         // entries of the commits queued and not yet applied or failed
  static constexpr size_t kMinForgetAt = 16384;
  size_t forget_at_ = kMinForgetAt;  // the set's size that triggers the next sweep

  // queue_mu_
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Request>> queue_;
  // The wake-up the commits queued since the leader took its last group share (not deferred).
  std::shared_ptr<WakeGroup> open_wake_;
  bool leader_active_ = false;   // a leader runs or is scheduled: committers just queue
  bool leader_running_ = false;  // run_leader() is draining the queue on some thread
  bool want_successor_ = false;  // the running leader's turn is up
  bool handoff_ = false;         // a successor waits to take over from the running leader
  bool closed_ = false;

  // Checks from before their first look until their commit is queued or refused (seq_cst, like
  // visible_'s store by the leader and load by a check: see write_group).
  std::atomic<int> checking_{0};
  std::atomic<SequenceNumber> visible_{0};
  // Written by the leader only.
  std::atomic<uint64_t> commits_{0}, groups_{0}, syncs_{0};
};

}  // namespace skv::commit

#endif  // SKV_COMMIT_COMMIT_PIPELINE_H_
