// TreeImpl: the tree's side of the commit pipeline (commit/commit_pipeline.h): the CommitEnv it
// implements (conflict lookups, making room, the WAL, applying batches, the sticky error), flush
// as a barrier between groups, and memtable switches.

#include <algorithm>

#include "format/file_names.h"
#include "memtable/batch_insert.h"
#include "tree/tree_impl.h"
#include "txn/transaction_impl.h"
#include "util/status_macros.h"

namespace skv {

CommitFuture TreeImpl::commit(WriteBatch batch, SequenceNumber snapshot, bool check_conflicts,
                              bool sync) {
  Status s = check_open();
  if (!s.ok()) return CommitFuture::make_ready(std::move(s));
  return pipeline_->commit(std::move(batch), snapshot, check_conflicts, sync);
}

Status TreeImpl::write_error() {
  std::lock_guard<std::mutex> lock(mu_);
  return bg_error_;
}

Result<SequenceNumber> TreeImpl::newest_sequence(std::string_view key, SequenceNumber snapshot) {
  std::shared_ptr<const ReadView> view = current_view();
  if (view == nullptr) return Status::closed("tree is closed");
  MemTable::GetResult r;
  if (view->mem->get(key, kMaxSequenceNumber, &r)) return r.sequence;
  for (const auto& imm : view->imms) {
    if (imm->get(key, kMaxSequenceNumber, &r)) return r.sequence;
  }
  // No table holds anything newer than the snapshot: no need to look.
  if (snapshot >= view->version_max_seq) return SequenceNumber{0};
  Table::GetResult tr;
  bool found = false;
  SKV_RETURN_IF_ERROR(view->version->get(key, kMaxSequenceNumber, &tr, &found));
  return found ? tr.sequence : SequenceNumber{0};
}

Status TreeImpl::write_wal(const std::vector<std::string_view>& records, bool sync) {
  SKV_RETURN_IF_ERROR(wal_->add_records(records));
  if (sync) SKV_RETURN_IF_ERROR(wal_->sync());
  return Status();
}

void TreeImpl::apply(std::string_view record) { insert_batch(record, mem_.get()); }

void TreeImpl::fail(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  wal_failed_ = true;
  set_background_error(s);
}

void TreeImpl::schedule(std::function<void()> task) {
  std::weak_ptr<TreeImpl> weak = weak_from_this();
  platform_->executor().schedule([weak, task = std::move(task)] {
    if (std::shared_ptr<TreeImpl> t = weak.lock()) task();
  });
}

Future<Status> TreeImpl::flush() {
  Promise<Status> done;
  Future<Status> f = done.future();
  if (Status s = check_writable("flush"); !s.ok()) {
    done.set(s);
    return f;
  }
  // A barrier: it runs on the commit leader between groups, so the memtable it freezes holds
  // every commit queued before the flush and none after.
  pipeline_->barrier([this, done](const Status& stopped) {
    if (!stopped.ok()) {
      done.set(stopped);
      return;
    }
    Status s = make_room_for_write(true);
    if (!s.ok()) {
      done.set(s);
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (imms_.empty()) {
      lock.unlock();
      done.set(Status());  // nothing to flush
      return;
    }
    imms_.back().flush_waiters.push_back(done);  // completed when that memtable is a table
  });
  if (!platform_->executor().concurrent()) {
    // One task at a time: stop as soon as this flush is done, leaving the rest of the queued
    // work (compaction steps, which requeue themselves) to the embedder's own pump.
    while (!f.ready() && platform_->executor().run_pending(1) > 0) {
    }
  }
  return f;
}

Status TreeImpl::await(const Future<Status>& f) {
  Executor& executor = platform_->executor();
  if (!executor.concurrent()) {
    while (!f.ready()) {
      if (executor.run_pending(1) == 0 && !f.ready()) {
        return Status::io_error("the operation cannot complete: no background work is left to run");
      }
    }
  }
  return f.wait();
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
        if (platform_->executor().run_pending(1) == 0) {
          return Status::io_error("writes stalled and no background work can run");
        }
        continue;
      }
    }
    return switch_memtable();
  }
}

Status TreeImpl::switch_memtable() {
  // Only the newest WAL segment may hold unsynced bytes, or zeros reserved after its last
  // record: recovery relies on it. Both are settled before the next segment exists.
  Status s = wal_->release_room();
  if (s.ok()) s = wal_->sync();
  if (!s.ok()) {
    // The old segment's unsynced tail is of unknown fate: never sync it again.
    std::lock_guard<std::mutex> lock(mu_);
    wal_failed_ = true;
  }
  Result<uint64_t> number = s.ok() ? versions_->new_file_number() : Result<uint64_t>(s);
  if (!number.ok()) s = number.status();
  Result<std::unique_ptr<LogFile>> file = s.ok() ? storage_->logs().create(wal_file_name(*number))
                                                 : Result<std::unique_ptr<LogFile>>(s);
  if (!file.ok()) s = file.status();
  // The new segment's name must be durable before any commit in it is acknowledged.
  if (s.ok()) s = storage_->sync_dir();
  Result<std::shared_ptr<const crypto::FileCipher>> cipher =
      s.ok() ? new_file_cipher(FileKind::Wal, *number, wal_file_name(*number))
             : Result<std::shared_ptr<const crypto::FileCipher>>(s);
  if (!cipher.ok()) s = cipher.status();
  if (s.ok()) {
    FileHeader h;
    h.kind = FileKind::Wal;
    h.file_number = *number;
    auto writer = std::make_unique<log::Writer>(std::move(file).value(), h, *cipher);
    writer->reserve_ahead(kWalRoomStep);
    std::unique_ptr<log::Writer> old;
    std::lock_guard<std::mutex> lock(mu_);
    imms_.push_back(ImmEntry{mem_, wal_number_, {}});
    mem_ = new_memtable();
    old = std::move(wal_);
    wal_ = std::move(writer);
    wal_number_ = *number;
    install_view();
    maybe_schedule_work();
    (void)old->close();
    return Status();
  }
  s = s.with_context("switching to a new WAL segment");
  std::lock_guard<std::mutex> lock(mu_);
  set_background_error(s);
  return s;
}

}  // namespace skv
