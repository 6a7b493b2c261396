// TreeImpl: the commit pipeline (DESIGN.md §3).
//
//   1. commit() validates the transaction against everything committed after its snapshot
//      (first committer wins), assigns its sequence number and queues it — under commit_mu_, so
//      queue order is sequence order.
//   2. The first committer to find no leader becomes the leader: it takes every queued request,
//      writes them to the WAL with one append, syncs once if any asked for Immediate, inserts
//      them into the memtable, publishes the group's last sequence number (so a snapshot always
//      sees a prefix of commits) and completes their futures. It repeats until the queue is
//      empty. Other committers return at once with a pending future.
//   3. A WAL failure is sticky: the group and every later commit fail with its cause.

#include <algorithm>
#include <cstdio>

#include "format/file_names.h"
#include "tree/tree_impl.h"
#include "txn/transaction_impl.h"
#include "util/status_macros.h"
#include "wal/write_batch.h"

namespace skv {

namespace {
constexpr size_t kMaxGroupBytes = 8u << 20;

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
}  // namespace

struct TreeImpl::CommitRequest {
  std::shared_ptr<const WriteMap> writes;  // null for a flush request
  WriteBatch batch;
  SequenceNumber seq = 0;
  uint64_t commit_ts = 0;
  bool sync = false;
  bool flush_request = false;
  Promise<Status> promise;
};

Status TreeImpl::validate(const TransactionImpl& txn, const ReadView& view) {
  const SequenceNumber snap = txn.snapshot();
  for (const auto& [key, w] : txn.writes().map()) {
    (void)w;
    SequenceNumber newest = 0;
    bool known = false;
    if (inflight_.count(key) != 0) {
      known = true;
      newest = kMaxSequenceNumber;
    }
    MemTable::GetResult r;
    if (!known && view.mem->get(key, kMaxSequenceNumber, &r)) {
      known = true;
      newest = r.sequence;
    }
    for (size_t i = 0; !known && i < view.imms.size(); ++i) {
      if (view.imms[i]->get(key, kMaxSequenceNumber, &r)) {
        known = true;
        newest = r.sequence;
      }
    }
    if (!known && snap < view.version_max_seq) {
      Table::GetResult tr;
      bool found = false;
      SKV_RETURN_IF_ERROR(view.version->get(key, kMaxSequenceNumber, &tr, &found));
      if (found) newest = tr.sequence;
    }
    if (newest > snap) {
      return Status::conflict("key '" + printable_key(key) +
                              "' was written by another transaction that committed first");
    }
  }
  return Status();
}

CommitFuture TreeImpl::commit(const TransactionImpl& txn) {
  auto req = std::make_shared<CommitRequest>();
  req->writes = txn.writes().shared_map();
  req->sync = txn.durability() == Durability::Immediate;
  req->commit_ts = platform_->clock().now_nanos();
  for (const auto& [key, w] : *req->writes) {
    uint64_t ts = w.timestamp != 0 ? w.timestamp : req->commit_ts;
    if (w.is_delete) {
      req->batch.del(key, ts);
    } else {
      req->batch.put(key, w.value, ts);
    }
  }
  bool lead = false;
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    Status s = check_open();
    if (s.ok()) {
      std::lock_guard<std::mutex> bg(mu_);
      s = bg_error_;
    }
    if (s.ok() && txn.mode() != Mode::WriteOnly) s = validate(txn, *current_view());
    if (!s.ok()) return CommitFuture::make_ready(std::move(s));
    req->seq = ++last_allocated_seq_;
    req->batch.set_sequence(req->seq);
    for (const auto& [key, w] : *req->writes) inflight_[key] = req->seq;
    std::lock_guard<std::mutex> q(queue_mu_);
    if (queue_closed_) {
      for (const auto& [key, w] : *req->writes) inflight_.erase(key);
      return CommitFuture::make_ready(Status::closed("tree is closed"));
    }
    queue_.push_back(req);
    if (!leader_active_) lead = leader_active_ = true;
  }
  CommitFuture f = req->promise.future();
  if (lead) start_leader();
  return f;
}

void TreeImpl::start_leader() {
  if (options_.commit_pipeline == CommitPipeline::Inline) {
    run_leader();
    return;
  }
  // Deferred: everything queued until the executor runs this task shares one WAL write.
  std::weak_ptr<TreeImpl> weak = weak_from_this();
  platform_->executor().schedule([weak] {
    if (std::shared_ptr<TreeImpl> t = weak.lock()) t->run_leader();
  });
}

Future<Status> TreeImpl::flush() {
  auto req = std::make_shared<CommitRequest>();
  req->flush_request = true;
  Future<Status> f = req->promise.future();
  bool lead = false;
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    std::lock_guard<std::mutex> q(queue_mu_);
    if (queue_closed_) return Future<Status>::make_ready(Status::closed("tree is closed"));
    queue_.push_back(req);
    if (!leader_active_) lead = leader_active_ = true;
  }
  if (lead) start_leader();
  if (!platform_->executor().concurrent()) {
    while (!f.ready() && platform_->executor().run_pending(64) > 0) {
    }
  }
  return f;
}

void TreeImpl::run_leader() {
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    // One leader at a time: a deferred leader task and close() may both get here.
    if (leader_running_ || !leader_active_) return;
    leader_running_ = true;
  }
  while (true) {
    std::vector<std::shared_ptr<CommitRequest>> group;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      size_t bytes = 0;
      while (!queue_.empty() && bytes < kMaxGroupBytes) {
        if (queue_.front()->flush_request && !group.empty()) break;  // flushes go alone
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
        if (group.back()->flush_request) break;
        bytes += group.back()->batch.approximate_size();
      }
      if (group.empty()) {
        leader_active_ = false;
        leader_running_ = false;
        queue_cv_.notify_all();
        return;
      }
    }
    Status s = write_group(group);
    if (group.front()->flush_request) {
      if (!s.ok()) group.front()->promise.set(s);
      continue;  // on success the flush completes the promise
    }
    for (auto& req : group) {
      if (!s.ok()) finish_inflight(*req);
      req->promise.set(s);
    }
  }
}

void TreeImpl::finish_inflight(const CommitRequest& req) {
  std::lock_guard<std::mutex> lock(commit_mu_);
  for (const auto& [key, w] : *req.writes) {
    auto it = inflight_.find(key);
    if (it != inflight_.end() && it->second == req.seq) inflight_.erase(it);
  }
}

Status TreeImpl::write_group(std::vector<std::shared_ptr<CommitRequest>>& group) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!bg_error_.ok()) return bg_error_;
  }
  if (group.front()->flush_request) {
    SKV_RETURN_IF_ERROR(make_room_for_write(true));
    std::lock_guard<std::mutex> lock(mu_);
    if (!imms_.empty()) {
      imms_.back().flush_waiters.push_back(group.front()->promise);
    } else {
      group.front()->promise.set(Status());
    }
    return Status();
  }
  SKV_RETURN_IF_ERROR(make_room_for_write(false));
  std::vector<std::string_view> records;
  records.reserve(group.size());
  bool sync = false;
  for (auto& req : group) {
    records.push_back(req->batch.encoded());
    sync = sync || req->sync;
  }
  Status s = wal_->add_records(records);
  if (s.ok() && sync) {
    s = wal_->sync();
    wal_syncs_.fetch_add(1, std::memory_order_relaxed);
  }
  if (!s.ok()) {
    s = s.with_context("write-ahead log");
    std::lock_guard<std::mutex> lock(mu_);
    set_background_error(s);
    return s;
  }
  for (auto& req : group) {
    for (const auto& [key, w] : *req->writes) {
      uint64_t ts = w.timestamp != 0 ? w.timestamp : req->commit_ts;
      mem_->add(req->seq, w.is_delete ? ValueKind::Delete : ValueKind::Value, key, w.value, ts);
    }
  }
  visible_seq_.store(group.back()->seq, std::memory_order_release);
  commits_.fetch_add(group.size(), std::memory_order_relaxed);
  commit_groups_.fetch_add(1, std::memory_order_relaxed);
  for (auto& req : group) finish_inflight(*req);
  return Status();
}

Status TreeImpl::make_room_for_write(bool force) {
  while (true) {
    if (force ? mem_->empty() : mem_->approximate_memory_usage() < options_.memtable_size) {
      return Status();
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!bg_error_.ok()) return bg_error_;
      if (closing_) return Status::closed("tree is closing");
      const bool too_many_imms =
          static_cast<int>(imms_.size()) >= std::max(1, options_.max_immutable_memtables);
      const bool too_many_l0 =
          versions_->current()->num_files(0) >= options_.l0_stop_writes_trigger;
      if (too_many_imms || too_many_l0) {
        ++stalls_;
        maybe_schedule_work();
        if (platform_->executor().concurrent()) {
          bg_cv_.wait(lock);
          continue;
        }
        lock.unlock();
        if (platform_->executor().run_pending(64) == 0) {
          return Status::io_error("writes stalled and no background work can run");
        }
        continue;
      }
    }
    return switch_memtable();
  }
}

Status TreeImpl::switch_memtable() {
  // Only the newest WAL segment may hold unsynced bytes: recovery relies on it.
  Status s = wal_->sync();
  if (s.ok()) {
    const uint64_t number = versions_->new_file_number();
    auto file = storage_->logs().create(wal_file_name(number));
    // The new segment's name must be durable before any commit in it is acknowledged.
    if (file.ok()) s = storage_->sync_dir();
    if (!file.ok()) {
      s = file.status();
    } else if (s.ok()) {
      FileHeader h;
      h.kind = FileKind::Wal;
      h.file_number = number;
      auto writer = std::make_unique<log::Writer>(std::move(file).value(), h);
      std::unique_ptr<log::Writer> old;
      std::lock_guard<std::mutex> lock(mu_);
      imms_.push_back(ImmEntry{mem_, wal_number_, {}});
      mem_ = std::make_shared<MemTable>(arena_block_size());
      old = std::move(wal_);
      wal_ = std::move(writer);
      wal_number_ = number;
      install_view();
      maybe_schedule_work();
      (void)old->close();
      return Status();
    }
  }
  s = s.with_context("switching to a new WAL segment");
  std::lock_guard<std::mutex> lock(mu_);
  set_background_error(s);
  return s;
}

}  // namespace skv
