#include "commit/commit_pipeline.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <tuple>
#include <utility>

#include "skv/options.h"
#include "util/status_macros.h"

namespace skv::commit {

namespace {

// A key as it may appear in a message: printable ASCII kept, the rest escaped, long keys cut.
std::string printable_key(std::string_view key) {
  std::string out;
  for (char c : key.substr(0, 64)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && u != '\\') {
      out.push_back(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  if (key.size() > 64) out += "...";
  return out;
}

// Counts a conflict check in `n` from before its first look until end() (its commit is queued
// or refused).
class CheckScope {
 public:
  explicit CheckScope(std::atomic<int>* n) : n_(n) {
    if (n_ != nullptr) n_->fetch_add(1);
  }
  ~CheckScope() { end(); }
  CheckScope(const CheckScope&) = delete;
  CheckScope& operator=(const CheckScope&) = delete;
  void end() {
    if (n_ != nullptr) n_->fetch_sub(1);
    n_ = nullptr;
  }

 private:
  std::atomic<int>* n_;
};

}  // namespace

struct CommitPipeline::Request {
  Request() = default;
  explicit Request(WriteBatch&& b) : batch(std::move(b)) {}

  WriteBatch batch;
  std::string_view record;  // batch.encoded(), once the batch has its sequence number
  SequenceNumber seq = 0;
  bool sync = false;
  std::function<void(const Status&)> barrier;  // set for a barrier, which has no batch
  Promise<Status> promise;
  std::shared_ptr<WakeGroup> wake;  // the waiters' wake-up (not for a deferred pipeline)
  size_t keys = 0;                  // entries the batch writes (counted in queued_keys_)

  // Calls fn(key) for every key the batch writes.
  template <typename Fn>
  void for_each_key(Fn&& fn) const {
    WriteBatch::for_each(record, [&](const WriteBatch::Entry& e) { fn(e.key); });
  }
};

CommitPipeline::CommitPipeline(CommitEnv* env, bool deferred, std::chrono::nanoseconds leader_turn)
    : env_(env), deferred_(deferred), leader_turn_(leader_turn) {}

CommitPipeline::~CommitPipeline() = default;

void CommitPipeline::start_after(SequenceNumber last, uint64_t last_timestamp) {
  std::lock_guard<std::mutex> lock(commit_mu_);
  last_allocated_ = last;
  last_timestamp_ = last_timestamp;
  visible_.store(last, std::memory_order_release);
}

uint64_t CommitPipeline::last_timestamp() {
  std::lock_guard<std::mutex> lock(commit_mu_);
  return last_timestamp_;
}

CommitCounters CommitPipeline::counters() const {
  CommitCounters c;
  c.commits = commits_.load(std::memory_order_relaxed);
  c.groups = groups_.load(std::memory_order_relaxed);
  c.syncs = syncs_.load(std::memory_order_relaxed);
  return c;
}

size_t CommitPipeline::inflight_entries() {
  std::lock_guard<std::mutex> lock(commit_mu_);
  return inflight_.size();
}

Status CommitPipeline::check_committed(const Request& req, SequenceNumber snapshot) {
  Status s;
  req.for_each_key([&](std::string_view key) {
    if (!s.ok()) return;
    Result<SequenceNumber> newest = env_->newest_sequence(key, snapshot);
    if (!newest.ok()) {
      s = newest.status();
    } else if (*newest > snapshot) {
      s = conflict(key);
    }
  });
  return s;
}

Status CommitPipeline::check_recent(const Request& req, SequenceNumber snapshot,
                                    SequenceNumber checked_through) {
  // REQUIRES: commit_mu_ held.
  if (checked_through < forgotten_through_) {
    // Commits after `checked_through` may have left the set: look them up where they landed
    // (every commit the set forgot is applied).
    SKV_RETURN_IF_ERROR(check_committed(req, snapshot));
  }
  Status s;
  req.for_each_key([&](std::string_view key) {
    if (!s.ok()) return;
    auto it = inflight_.find(key);
    if (it != inflight_.end() && it->second > snapshot) s = conflict(key);
  });
  return s;
}

Status CommitPipeline::conflict(std::string_view key) {
  return Status::conflict("key '" + printable_key(key) +
                          "' was written by another transaction that committed first");
}

void CommitPipeline::forget_applied(int own_checks) {
  // REQUIRES: commit_mu_ held.
  if (inflight_.size() <= queued_keys_) return;  // nothing applied is kept
  const SequenceNumber visible = visible_.load();
  if (checking_.load() == own_checks) {
    // No other check is between its first look and the lock, and one that starts from now on
    // starts from at least `visible`: nobody needs what was applied. Swept when at least half
    // the set is such keys, so a sweep costs at most twice what it drops.
    if (inflight_.size() >= 2 * queued_keys_) forget_through(visible, /*force=*/true);
    return;
  }
  if (inflight_.size() < forget_at_) return;
  // Keep what was applied since the last sweep, so only a check that started before the last
  // sweep falls back to looking its keys up again under the lock.
  forget_through(sweep_mark_);
  sweep_mark_ = visible;
  forget_at_ = std::max(kMinForgetAt, 2 * inflight_.size());
}

void CommitPipeline::forget_through(SequenceNumber seq, bool force) {
  // REQUIRES: commit_mu_ held.
  if (seq <= forgotten_through_ && !force) return;
  std::erase_if(inflight_, [&](const auto& entry) { return entry.second <= seq; });
  forgotten_through_ = std::max(forgotten_through_, seq);
}

CommitFuture CommitPipeline::commit(WriteBatch batch, SequenceNumber snapshot, bool check_conflicts,
                                    bool sync) {
  auto req = std::make_shared<Request>(std::move(batch));
  req->record = req->batch.encoded();
  req->keys = req->batch.count();
  req->sync = sync;
  bool lead = false, succeed = false;
  // The conflict check, in two parts. First, with no lock held, each key is looked up where
  // committed versions live: that covers every commit up to `checked_through` (published, so
  // applied). Then, under the commit lock, the keys of the commits after it: they are in the
  // in-flight set, which keeps a commit's keys until well after it is applied (forget_applied).
  SequenceNumber checked_through = 0;
  CheckScope scope(check_conflicts ? &checking_ : nullptr);
  if (check_conflicts) {
    checked_through = visible_.load();  // after counting this check in checking_
    Status s = check_committed(*req, snapshot);
    if (!s.ok()) return CommitFuture::make_ready(std::move(s));
  }
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    Status s;
    {
      std::lock_guard<std::mutex> q(queue_mu_);
      if (closed_) s = Status::closed("tree is closed");
    }
    if (s.ok()) s = env_->write_error();
    if (s.ok() && check_conflicts) s = check_recent(*req, snapshot, checked_through);
    if (!s.ok()) return CommitFuture::make_ready(std::move(s));
    forget_applied(check_conflicts ? 1 : 0);
    req->seq = ++last_allocated_;
    // Above the previous commit's, whatever the clock says; capped where timestamps end (a
    // clock that far ahead would otherwise overflow them).
    last_timestamp_ = std::min(kMaxTimestamp, std::max(env_->now_nanos(), last_timestamp_ + 1));
    req->batch.set_sequence(req->seq);  // in place: `record` stays valid
    req->batch.set_commit_timestamp(last_timestamp_);
    queued_keys_ += req->keys;
    req->for_each_key([&](std::string_view key) {
      auto it = inflight_.find(key);
      if (it != inflight_.end()) {
        it->second = req->seq;
      } else {
        inflight_.emplace(std::piecewise_construct, std::forward_as_tuple(key),
                          std::forward_as_tuple(req->seq));
      }
    });
    std::lock_guard<std::mutex> q(queue_mu_);
    if (closed_) {
      finish_inflight(*req);  // REQUIRES commit_mu_: held
      return CommitFuture::make_ready(Status::closed("tree is closed"));
    }
    if (!deferred_) {
      // Every commit queued until the leader takes the next group shares one wake-up.
      if (!open_wake_) open_wake_ = std::make_shared<WakeGroup>();
      req->wake = open_wake_;
      req->promise.join(open_wake_);
    }
    queue_.push_back(req);
    if (!leader_active_) {
      lead = leader_active_ = true;
    } else if (want_successor_ && !handoff_ && !deferred_) {
      succeed = handoff_ = true;
    }
  }
  scope.end();  // before leading: the leader's own check is over
  CommitFuture f = req->promise.future();
  if (lead) start_leader();
  if (succeed) run_leader(Role::Successor);
  return f;
}

void CommitPipeline::barrier(std::function<void(const Status&)> fn) {
  auto req = std::make_shared<Request>();
  req->barrier = std::move(fn);
  bool queued = false, lead = false;
  {
    std::lock_guard<std::mutex> q(queue_mu_);
    if (!closed_) {
      queue_.push_back(req);
      queued = true;
      if (!leader_active_) lead = leader_active_ = true;
    }
  }
  if (!queued) {
    req->barrier(Status::closed("tree is closed"));
    return;
  }
  if (lead) start_leader();
}

void CommitPipeline::start_leader() {
  if (!deferred_) {
    run_leader(Role::Committer);
    return;
  }
  // Everything queued until the executor runs this task goes out in one group.
  env_->schedule([this] { run_leader(Role::Drainer); });
}

void CommitPipeline::run_leader(Role role) {
  {
    std::unique_lock<std::mutex> lock(queue_mu_);
    if (role == Role::Successor) {
      // The running leader stops between two groups when it sees handoff_ (or when the queue is
      // empty); then this thread leads what is left, its own commit among it.
      queue_cv_.wait(lock, [&] { return !leader_running_; });
      handoff_ = false;
      want_successor_ = false;
      if (queue_.empty()) {
        leader_active_ = false;
        queue_cv_.notify_all();
        return;
      }
      leader_active_ = true;
    } else if (leader_running_ || !leader_active_) {
      // One leader at a time: a deferred leader task and close() may both get here.
      return;
    }
    leader_running_ = true;
  }
  const auto turn_ends = std::chrono::steady_clock::now() + leader_turn_;
  while (true) {
    Group group;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      if (handoff_) {
        // A successor waits: it leads from here, and this thread goes back to its caller.
        leader_running_ = false;
        queue_cv_.notify_all();
        return;
      }
      if (role != Role::Drainer && !want_successor_ &&
          std::chrono::steady_clock::now() >= turn_ends) {
        want_successor_ = true;
      }
      size_t bytes = 0;
      while (!queue_.empty() && bytes < kMaxGroupBytes) {
        if (queue_.front()->barrier && !group.empty()) break;  // barriers run alone
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
        if (group.back()->barrier) break;
        bytes += group.back()->record.size();
      }
      open_wake_.reset();  // commits queued from now on wake with a later group
      if (group.empty()) {
        leader_active_ = false;
        leader_running_ = false;
        want_successor_ = false;
        queue_cv_.notify_all();  // close(), and a successor that came too late
        return;
      }
    }
    if (group.front()->barrier) {
      group.front()->barrier(env_->write_error());
      continue;
    }
    Status s = write_group(group);
    if (!s.ok()) {
      std::lock_guard<std::mutex> lock(commit_mu_);
      for (const auto& req : group) finish_inflight(*req);
    }
    complete(group, s);
  }
}

void CommitPipeline::complete(const Group& group, const Status& s) {
  if (deferred_) {
    for (const auto& req : group) req->promise.set(s);
    return;
  }
  // A group holds the commits of one wake-up, sometimes the tail of the previous one's (a group
  // cut at kMaxGroupBytes): one system call per wake-up, not one per commit.
  for (const auto& req : group) req->promise.set_without_wake(s);
  const WakeGroup* woken = nullptr;
  for (const auto& req : group) {
    WakeGroup* w = req->wake.get();
    if (w != woken) {
      w->wake_all();
      woken = w;
    }
  }
}

Status CommitPipeline::write_group(const Group& group) {
  SKV_RETURN_IF_ERROR(env_->write_error());
  SKV_RETURN_IF_ERROR(env_->make_room(false));
  std::vector<std::string_view> records;
  records.reserve(group.size());
  bool sync = false;
  for (const auto& req : group) {
    records.push_back(req->record);
    sync = sync || req->sync;
  }
  Status s = env_->write_wal(records, sync);
  if (sync) syncs_.fetch_add(1, std::memory_order_relaxed);
  if (!s.ok()) {
    s = s.with_context("write-ahead log");
    env_->fail(s);
    return s;
  }
  for (const auto& req : group) env_->apply(req->record);
  visible_.store(group.back()->seq);
  commits_.fetch_add(group.size(), std::memory_order_relaxed);
  groups_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(commit_mu_);
  // A check that started before the store above may still need the group's keys: then they stay
  // until forget_applied() drops them. Otherwise they go now: a check that starts from here on
  // starts from at least this group (seq_cst: either this load sees the check counted, or the
  // check's load of visible_ sees the store).
  if (checking_.load() != 0) {
    for (const auto& req : group) queued_keys_ -= req->keys;
    return Status();
  }
  for (const auto& req : group) finish_inflight(*req);
  // Keys kept from busier times go too, once they are at least half the set (so a sweep costs at
  // most twice what it drops); below that the set holds more queued keys than kept ones.
  if (inflight_.size() > queued_keys_ && inflight_.size() >= 2 * queued_keys_) {
    forget_through(group.back()->seq, /*force=*/true);
  }
  return Status();
}

void CommitPipeline::finish_inflight(const Request& req) {
  queued_keys_ -= req.keys;
  req.for_each_key([&](std::string_view key) {
    auto it = inflight_.find(key);
    if (it != inflight_.end() && it->second == req.seq) inflight_.erase(it);
  });
  // An entry erased here may have stood for an applied commit too (a newer writer of a key takes
  // its entry over), so a check from before now looks its keys up again.
  forgotten_through_ = std::max(forgotten_through_, visible_.load());
}

void CommitPipeline::close() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    closed_ = true;
  }
  // A deferred leader may be only scheduled: run it here (it returns at once if it already runs
  // on another thread), then wait until the queue is drained.
  run_leader(Role::Drainer);
  std::unique_lock<std::mutex> lock(queue_mu_);
  queue_cv_.wait(lock, [&] { return !leader_active_ && queue_.empty(); });
}

}  // namespace skv::commit
