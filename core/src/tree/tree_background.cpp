// TreeImpl: background work — flushing frozen memtables to L0, compacting levels and collecting
// value log garbage — and the manual forms of them (Tree::flush, Tree::compact_all,
// Tree::collect_vlog_garbage). Garbage collection runs as compactions (compaction_picker.h),
// picked only when no level needs compacting, one at a time like every compaction.
//
// At most one flush and one compaction run at a time; they may run at once (a flush only adds
// L0 files, and edits are applied to whatever version is current when they are logged). Any
// failure is sticky: it is stored in bg_error_, later commits fail with it, and no more
// background work is scheduled.

#include <algorithm>

#include "compaction/compaction_job.h"
#include "compaction/compaction_picker.h"
#include "tree/tree_impl.h"
#include "util/status_macros.h"

namespace skv {

void TreeImpl::set_background_error(const Status& s) {
  if (bg_error_.ok() && !s.ok()) bg_error_ = s;
  bg_cv_.notify_all();
}

void TreeImpl::fail_flush_waiters(std::unique_lock<std::mutex>& lock, const Status& s) {
  std::vector<Promise<Status>> waiters;
  for (auto& imm : imms_) {
    for (auto& w : imm.flush_waiters) waiters.push_back(std::move(w));
    imm.flush_waiters.clear();
  }
  if (waiters.empty()) return;
  lock.unlock();  // a waiter's callbacks may call back into the tree
  for (auto& w : waiters) w.set(s);
  lock.lock();
}

bool TreeImpl::needs_compaction() const {
  return skv::needs_compaction(*versions_) || needs_vlog_gc(*versions_);
}

std::unique_ptr<Compaction> TreeImpl::pick_background_compaction() {
  if (std::unique_ptr<Compaction> c = pick_compaction(*versions_)) return c;
  return pick_vlog_gc(*versions_);
}

void TreeImpl::maybe_schedule_work() {
  if (closing_ || !bg_error_.ok()) return;
  std::weak_ptr<TreeImpl> weak = weak_from_this();
  if (!flush_scheduled_ && !imms_.empty()) {
    flush_scheduled_ = true;
    platform_->executor().schedule([weak] {
      if (auto t = weak.lock()) t->flush_task();
    });
  }
  if (!compaction_scheduled_ && !manual_compaction_ && needs_compaction()) {
    compaction_scheduled_ = true;
    platform_->executor().schedule([weak] {
      if (auto t = weak.lock()) t->compaction_task();
    });
  }
}

void TreeImpl::wait_for_background(std::unique_lock<std::mutex>& lock) {
  // A manual compaction runs on its caller's thread, in steps: it sees closing_ at the next one.
  bg_cv_.wait(lock, [&] { return !manual_compaction_ && file_readers_ == 0; });
  if (!platform_->executor().concurrent()) return;  // queued tasks see closing_ and do nothing
  bg_cv_.wait(lock, [&] { return !flush_scheduled_ && !compaction_scheduled_; });
}

TreeImpl::FileReaderScope::~FileReaderScope() {
  std::lock_guard<std::mutex> lock(t_->mu_);
  --t_->file_readers_;
  t_->bg_cv_.notify_all();
}

void TreeImpl::flush_task() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!imms_.empty() && !closing_ && bg_error_.ok()) {
    std::shared_ptr<MemTable> mem = imms_.front().mem;
    std::shared_ptr<const Version> base = versions_->current();
    JobContext ctx = job_context();
    lock.unlock();

    FileMetaData meta;
    std::vector<VlogFileMeta> vlogs;
    Status s;
    if (!mem->empty()) {
      std::unique_ptr<InternalIterator> it = mem->new_iterator();
      s = write_level0_table(it.get(), ctx, base.get(), &meta, &vlogs);
    }

    lock.lock();
    std::vector<Promise<Status>> waiters;
    if (s.ok()) {
      VersionEdit edit;
      if (meta.num_entries > 0) edit.add_file(0, meta);
      // The value logs the table points into become live with it, in the same edit.
      for (const auto& v : vlogs) edit.add_vlog_file(v);
      edit.set_log_number(imms_.size() > 1 ? imms_[1].wal_number : wal_number_);
      versions_->set_last_sequence(std::max(versions_->last_sequence(), mem->largest_sequence()));
      versions_->set_last_timestamp(mem->largest_commit_timestamp());
      s = versions_->log_and_apply(&edit);
      for (uint64_t n : edit.deleted_vlog_files()) obsolete_vlogs_.insert(n);
    }
    if (!s.ok()) {
      set_background_error(s.with_context("flush"));
      break;
    }
    waiters = std::move(imms_.front().flush_waiters);
    imms_.pop_front();
    ++flushes_;
    install_view();
    delete_obsolete_files();
    bg_cv_.notify_all();
    lock.unlock();
    for (auto& w : waiters) w.set(Status());
    lock.lock();
  }
  // Stopped by an error (this flush's or an earlier job's): nobody would complete the waiters.
  if (!bg_error_.ok()) fail_flush_waiters(lock, bg_error_);
  flush_scheduled_ = false;
  maybe_schedule_work();
  bg_cv_.notify_all();
}

JobContext TreeImpl::job_context() {
  JobContext ctx;
  ctx.storage = storage_.get();
  ctx.options = &options_;
  ctx.table_cache = table_cache_.get();
  ctx.vlog_cache = vlog_cache_.get();
  ctx.ciphers = keyring_.get();
  VersionSet* vs = versions_.get();
  ctx.new_file_number = [vs] { return vs->new_file_number(); };
  ctx.snapshots = snapshots_.list();
  if (versioning_.enabled) {
    const uint64_t now = platform_->clock().now_nanos();
    const uint64_t r = versioning_.retention_ns;
    ctx.retention_cutoff = r == 0 ? 0 : (now > r ? now - r : 0);
  }
  return ctx;
}

Status TreeImpl::compact_step(std::unique_ptr<CompactionJob>& job, uint64_t budget,
                              std::unique_lock<std::mutex>& lock, bool* done) {
  lock.unlock();
  Status s = job->step(budget, done);
  lock.lock();
  ++compaction_steps_;
  if (s.ok() && !*done) return Status();
  if (s.ok()) s = versions_->log_and_apply(job->edit());
  if (!s.ok()) {
    job.reset();
    set_background_error(s.with_context("compaction"));
    fail_flush_waiters(lock, bg_error_);
    return bg_error_;
  }
  const Compaction& c = job->compaction();
  for (const auto& f : c.inputs) obsolete_tables_.insert(f->number);
  for (const auto& f : c.output_inputs) obsolete_tables_.insert(f->number);
  for (uint64_t n : job->edit()->deleted_vlog_files()) obsolete_vlogs_.insert(n);
  ++compactions_;
  if (!c.relocate_vlogs.empty()) {
    ++vlog_gc_runs_;
    vlog_gc_bytes_moved_ += job->output().vlog_bytes_moved;
  }
  install_view();
  // The job holds the version its inputs belong to, which keeps them live: drop it first so
  // they are removed now rather than after the next flush or compaction.
  job.reset();
  delete_obsolete_files();
  return Status();
}

void TreeImpl::compaction_task() {
  std::unique_lock<std::mutex> lock(mu_);
  if (closing_ || !bg_error_.ok() || manual_compaction_) {
    bg_job_.reset();  // an unfinished job removes its outputs
  } else if (bg_job_ == nullptr) {
    if (std::unique_ptr<Compaction> c = pick_background_compaction()) {
      bg_job_ = std::make_unique<CompactionJob>(std::move(c), job_context());
    }
  }
  if (bg_job_ != nullptr) {
    bool done = false;
    Status s = compact_step(bg_job_, options_.compaction_step_bytes, lock, &done);
    if (s.ok() && !done && !closing_) {
      // Yield: the next step runs as a task of its own, behind whatever was queued meanwhile.
      std::weak_ptr<TreeImpl> weak = weak_from_this();
      platform_->executor().schedule([weak] {
        if (auto t = weak.lock()) t->compaction_task();
      });
      return;
    }
    if (!done) bg_job_.reset();
  }
  compaction_scheduled_ = false;
  maybe_schedule_work();
  bg_cv_.notify_all();
}

Status TreeImpl::begin_manual_compaction(std::unique_lock<std::mutex>& lock,
                                         const Status& closing) {
  // Take over compaction: wait for a running one, and keep new ones from being scheduled.
  if (platform_->executor().concurrent()) {
    bg_cv_.wait(lock, [&] {
      return (!compaction_scheduled_ && !manual_compaction_) || !bg_error_.ok() || closing_;
    });
  }
  if (closing_) return closing;  // close() may already be freeing what a job would use
  if (!bg_error_.ok()) return bg_error_;
  manual_compaction_ = true;
  return Status();
}

Status TreeImpl::run_manual_job(std::unique_ptr<CompactionJob>& job,
                                std::unique_lock<std::mutex>& lock, const Status& closing) {
  // In steps, so a close() on another thread waits for one step at most: between steps it sees
  // closing_ and the job is dropped (its outputs removed).
  bool done = false;
  while (job != nullptr) {
    if (closing_) {
      job.reset();
      return closing;
    }
    SKV_RETURN_IF_ERROR(compact_step(job, kManualCompactionStepBytes, lock, &done));
    if (done) break;
  }
  return Status();
}

void TreeImpl::end_manual_compaction() {
  manual_compaction_ = false;
  bg_cv_.notify_all();  // close() may be waiting for this
  maybe_schedule_work();
}

Status TreeImpl::compact_all() {
  SKV_RETURN_IF_ERROR(check_open());
  SKV_RETURN_IF_ERROR(check_writable("compact_all"));
  SKV_RETURN_IF_ERROR(flush().wait());
  const Status closing = Status::closed("tree closed during compact_all");
  std::unique_lock<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(begin_manual_compaction(lock, closing));
  // A background compaction paused between steps (single-threaded executors): finish it first,
  // so no file is compacted twice.
  Status s = run_manual_job(bg_job_, lock, closing);
  int level = 0;
  while (s.ok()) {
    if (closing_) {
      s = closing;
      break;
    }
    std::unique_ptr<Compaction> c = pick_manual_all(*versions_, level);
    if (!c) break;
    level = c->level + 1;  // the next step starts below this one (see pick_manual_all)
    auto job = std::make_unique<CompactionJob>(std::move(c), job_context());
    s = run_manual_job(job, lock, closing);
  }
  end_manual_compaction();
  return s;
}

Status TreeImpl::collect_vlog_garbage() {
  SKV_RETURN_IF_ERROR(check_open());
  SKV_RETURN_IF_ERROR(check_writable("collect_vlog_garbage"));
  const Status closing = Status::closed("tree closed during collect_vlog_garbage");
  std::unique_lock<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(begin_manual_compaction(lock, closing));
  Status s = run_manual_job(bg_job_, lock, closing);
  // Each step rewrites one table that points into a value log over the ratio, and its pointers
  // into those logs with it; the new value log it writes holds no garbage. So every step leaves
  // one table fewer pointing into them, and the loop ends.
  while (s.ok()) {
    if (closing_) {
      s = closing;
      break;
    }
    std::unique_ptr<Compaction> c = pick_vlog_gc(*versions_);
    if (!c) break;
    auto job = std::make_unique<CompactionJob>(std::move(c), job_context());
    s = run_manual_job(job, lock, closing);
  }
  // Files that only versions held by iterators kept (now released) go now too.
  if (s.ok()) delete_obsolete_files();
  end_manual_compaction();
  return s;
}

}  // namespace skv
