// Simulation: opening, closing and crashing the tree, checking what a reopen recovered, injected
// faults and quotas, and the tree-wide operations (flush, compact_all, background steps).
//
// Thread safety: see simulation.h.

#ifndef SKV_TOOLS_SIM_SIM_LIFECYCLE_H_
#define SKV_TOOLS_SIM_SIM_LIFECYCLE_H_

#include "tools/sim/simulation.h"

namespace skv::sim {

inline TreeBuilder Simulation::builder(const VersioningOption& versioning) {
  Options o = options_;
  o.platform = platform_;
  o.path = kPath;
  o.versioning = versioning;
  if (encrypted_) {
    o.key_manager = keys_;
    o.cipher = cipher_;
  }
  // The format is the same whatever these are, so they change from one open to the next.
  o.compression = rng_.one_in(2) ? Compression::Zstd : Compression::None;
  o.compression_start_level = 1 + static_cast<int>(rng_.uniform(2));
  static const size_t kBlockSizes[] = {256, 512, 1024, 4096};
  o.block_size = kBlockSizes[rng_.uniform(4)];
  if (rng_.one_in(4)) o.memtable_size = size_t{4096} << rng_.uniform(5);
  return TreeBuilder().with_options(o);
}

// Opens with `versioning` (the same on a retry), which an existing database must agree with; a
// new retention is stored from then on.
inline bool Simulation::open_tree(const VersioningOption& versioning) {
  const bool under_faults = faults_active_;
  Result<Tree> t = builder(versioning).build();
  if (!t.ok() && under_faults &&
      (t.status().code() == Code::IO || t.status().code() == Code::Quota)) {
    note("open failed under faults: %s; clearing them", show(t.status()).c_str());
    stop_faults();
    t = builder(versioning).build();
  }
  if (!t.ok()) return fail("open: " + show(t.status()));
  tree_.emplace(std::move(t).value());
  if (versioning && versioning->enabled) set_retention(versioning->retention_ns);
  const Versioning stored = tree_->versioning();
  if (stored != Versioning{versioned_, versioned_ ? retention_ : 0}) {
    return fail(
        "open" +
        (versioning ? " with_versioning(" + std::string(versioning->enabled ? "true" : "false") +
                          ", " + std::to_string(versioning->retention_ns) + ")"
                    : std::string(" without with_versioning")) +
        ": versioning() is {" + (stored.enabled ? "true" : "false") + ", " +
        std::to_string(stored.retention_ns) + "}, expected {" + (versioned_ ? "true" : "false") +
        ", " + std::to_string(versioned_ ? retention_ : 0) + "}");
  }
  if (faults_active_) stop_faults();  // what the open left must now read back cleanly
  armed_life_ = under_faults;
  write_error_seen_ = false;
  wal_failed_ = false;
  note("opened (last sequence %llu, versioning %s, retention %llu)",
       static_cast<unsigned long long>(tree_->stats().last_sequence), versioned_ ? "on" : "off",
       static_cast<unsigned long long>(retention_));
  return true;
}

// The versioning option of a reopen: mostly none (the stored setting holds) or the stored one,
// sometimes a new retention. Now and then first an open that contradicts the stored `enabled`,
// which must be refused.
inline Simulation::VersioningOption Simulation::draw_versioning_option() {
  const uint64_t r = rng_.uniform(20);
  if (r >= 18 && !faults_active_ && !refused_open()) return std::nullopt;
  if (r < 10) return std::nullopt;
  if (!versioned_) return Versioning{false, r < 15 ? 0 : rng_.between(1, 1'000'000)};
  if (r < 15) return Versioning{true, retention_};
  return Versioning{true, rng_.one_in(4) ? 0 : rng_.between(100'000, 3'000'000)};
}

// An open with_versioning(!stored enabled): InvalidArgument, and not a byte of the database
// changes.
inline bool Simulation::refused_open() {
  const std::string before = file_digest();
  const uint64_t clock = clock_now();
  const Versioning v{!versioned_, rng_.uniform(1'000'000)};
  Result<Tree> t = builder(v).build();
  note("open with_versioning(%s, %llu): %s", v.enabled ? "true" : "false",
       static_cast<unsigned long long>(v.retention_ns), show(t.status()).c_str());
  ++stats_.refused_opens;
  if (t.ok()) {
    (void)t->close();
    return fail(std::string("open with_versioning(") + (v.enabled ? "true" : "false") +
                ") of a database stored " + (versioned_ ? "versioned" : "unversioned") +
                " succeeded, expected invalid_argument");
  }
  if (t.status().code() != Code::InvalidArgument) {
    return fail(std::string("open with_versioning(") + (v.enabled ? "true" : "false") +
                ") of a database stored " + (versioned_ ? "versioned" : "unversioned") + ": " +
                show(t.status()) + ", expected invalid_argument");
  }
  const std::string after = file_digest();
  if (after != before) {
    return fail("a refused open changed the database: files were " + before + "; now " + after);
  }
  if (clock_now() != clock) return fail("a refused open read the clock");
  return true;
}

inline std::string Simulation::file_digest() {
  std::string out;
  Result<std::vector<MemoryFileInfo>> list = memory_->list_files(kPath);
  if (!list.ok()) return show(list.status());
  for (const MemoryFileInfo& f : *list) {
    Result<std::string> bytes = memory_->read_file(kPath, f.name);
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    if (bytes.ok()) {
      for (char c : *bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    }
    char hash[24];
    std::snprintf(hash, sizeof(hash), "#%016llx", static_cast<unsigned long long>(h));
    out += f.name + ":" + std::to_string(f.size) + "/" + std::to_string(f.synced_size) +
           (f.name_durable ? "d" : "") + (bytes.ok() ? std::string(hash) : show(bytes.status())) +
           " ";
  }
  return out;
}

inline void Simulation::reopen(bool crash) {
  held_.clear();
  bool synced = true;  // what the reopen finds is on stable storage
  if (!check_no_sync_after_wal_failure("before reopening")) return;
  if (crash) {
    const uint64_t seed = rng_.next();
    const bool tear = rng_.one_in(2);
    note("crash (seed %llu, %s)", static_cast<unsigned long long>(seed),
         tear ? "torn writes" : "unsynced bytes dropped");
    memory_->crash(seed, tear);
    (void)tree_->close();  // every handle died with the crash: close only reports that
    ++stats_.crashes;
  } else {
    if (faults_active_ && !rng_.one_in(4)) stop_faults();
    Status s = tree_->close();
    note("close: %s", show(s).c_str());
    if (!s.ok() && !write_error_ok(s)) {
      fail("close: " + show(s));
      return;
    }
    if (wal_failed_ && s.ok()) {
      fail("close returned OK after a commit failed in the write-ahead log");
      return;
    }
    if (!check_no_sync_after_wal_failure("close")) return;
    synced = s.ok();
    Status again = tree_->close();
    if (!again.ok()) {
      fail("a second close: " + show(again) + " (close is idempotent)");
      return;
    }
    ++stats_.reopens;
  }
  // Transactions outlive their tree, but every call on them now reports Closed.
  if (!txns_.empty()) {
    Txn& t = txns_[rng_.uniform(txns_.size())];
    Status s = t.mode == Mode::WriteOnly ? t.tx.set("k000", "x") : t.tx.get("k000").status();
    if (s.code() != Code::Closed) {
      fail("a transaction of a closed tree: " + show(s) + ", expected closed");
      return;
    }
    Status c = t.tx.commit().get();
    if (c.code() != Code::Closed) {
      fail("commit on a closed tree: " + show(c) + ", expected closed");
      return;
    }
  }
  Result<Transaction> late = tree_->begin();
  if (late.status().code() != Code::Closed) {
    fail("begin on a closed tree: " + show(late.status()) + ", expected closed");
    return;
  }
  txns_.clear();
  tree_.reset();
  // Sometimes the open runs with the faults still armed: it may fail, never damage anything.
  if (faults_active_ && !rng_.one_in(3)) stop_faults();
  if (!encryption_before_open()) return;
  const VersioningOption versioning = draw_versioning_option();
  if (failed() || !open_tree(versioning)) return;
  if (!verify_recovered(crash, synced)) return;
  // The engine continues above the newest commit timestamp it recovered: the last surviving
  // commit's, or one lost since that it recorded (ts_last_ is the newest given out).
  ts_floor_ = model_.recovered_timestamp_floor();
  if (ts_floor_ != ts_last_) probe_commit_timestamp();
}

inline bool Simulation::verify_recovered(bool allow_loss, bool durable) {
  Result<Transaction> tx = tree_->begin_with_mode(Mode::ReadOnly);
  if (!tx.ok()) return fail("begin after reopen: " + show(tx.status()));
  Result<Iterator> it = tx->range("", "");
  if (!it.ok()) return fail("reading the recovered tree: " + show(it.status()));
  State actual;
  std::vector<uint64_t> stamps;
  it->seek_first();  // errors show in status() below
  while (it->valid()) {
    Result<std::string_view> v = it->value();
    if (!v.ok()) return fail("reading the recovered tree: value(): " + show(v.status()));
    actual.emplace_back(std::string(it->key()), std::string(*v));
    stamps.push_back(it->timestamp());
    it->next();
  }
  if (!it->status().ok()) return fail("reading the recovered tree: " + show(it->status()));
  // The same entries backwards.
  size_t back = actual.size();
  it->seek_last();
  for (; it->valid(); it->prev()) {
    if (back == 0 || it->key() != actual[back - 1].first) {
      return fail("a backward scan of the recovered tree shows " + printable(it->key()) +
                  " where the forward scan had " +
                  (back == 0 ? std::string("nothing") : printable(actual[back - 1].first)));
    }
    --back;
  }
  if (back != 0 || !it->status().ok()) {
    return fail("a backward scan of the recovered tree ended early: " + show(it->status()));
  }
  Result<uint64_t> n = tx->count("", "");
  if (!n.ok() || *n != actual.size()) {
    return fail("count of the recovered tree: " + (n.ok() ? std::to_string(*n) : show(n.status())) +
                ", a full scan found " + std::to_string(actual.size()));
  }
  uint64_t lost = 0;
  RecoveryInput in;
  in.stamps = &stamps;
  if (versioned_) {
    // The versions above the horizon, read when keys, values and timestamps leave the surviving
    // prefix open, and one time in eight anyway (so a recovery that loses versions shows).
    in.horizon = horizon();
    in.always_read_versions = rng_.one_in(8);
    in.versions = [this, &tx, hz = in.horizon]() -> uint64_t {
      HistoryOptions all;
      all.include_tombstones = true;
      Result<Iterator> h = tx->history_range("", "", all);
      if (!h.ok()) {
        fail("reading the recovered versions: " + show(h.status()));
        return 0;
      }
      uint64_t digest = 0;
      for (h->seek_first(); h->valid(); h->next()) {
        if (h->timestamp() <= hz) continue;
        std::string_view value;
        if (!h->is_tombstone()) {
          Result<std::string_view> v = h->value();
          if (!v.ok()) {
            fail("reading the recovered versions: value(): " + show(v.status()));
            return 0;
          }
          value = *v;
        }
        digest += Model::version_hash(h->key(), h->timestamp(), h->is_tombstone(), value);
      }
      if (!h->status().ok()) fail("reading the recovered versions: " + show(h->status()));
      return digest;
    };
  }
  std::string msg = model_.recover(actual, allow_loss, durable, &lost, in);
  if (failed()) return false;
  if (!msg.empty()) return fail(msg);
  stats_.lost_commits += lost;
  note("recovered %zu keys at commit %llu (%llu commits lost)", actual.size(),
       static_cast<unsigned long long>(model_.last_commit()),
       static_cast<unsigned long long>(lost));
  return true;
}

inline void Simulation::op_faults() {
  if (faults_active_) {
    stop_faults();
  } else {
    start_faults();
  }
}

inline void Simulation::start_faults() {
  static const FaultOp kOps[] = {FaultOp::Read,   FaultOp::Write,        FaultOp::Sync,
                                 FaultOp::Create, FaultOp::Open,         FaultOp::Remove,
                                 FaultOp::List,   FaultOp::PointerWrite, FaultOp::SyncDir};
  static const char* const kTargets[] = {"", "", ".sst", ".wal", "MANIFEST", "CURRENT"};
  FaultPolicy policy;
  policy.seed = rng_.next();
  std::string desc;
  // Three kinds of phase: reads that fail now and then (the engine must report them, never
  // return wrong data), a few failing calls on the write path, or a full disk (a quota).
  const uint64_t kind = rng_.uniform(10);
  const bool quota = kind >= 8 || rng_.one_in(8);
  const size_t rules = kind < 3 ? 1 : kind < 8 ? rng_.between(1, 3) : 0;
  for (size_t i = 0; i < rules; ++i) {
    FaultRule r;
    if (kind < 3) {
      r.op = rng_.one_in(4) ? FaultOp::Open : FaultOp::Read;
      r.nth = 1;
      r.times = FaultRule::kForever;
      r.one_in = rng_.between(2, 8);
      r.target_contains = rng_.one_in(4) ? "" : ".sst";
    } else {
      r.op = kOps[rng_.uniform(sizeof(kOps) / sizeof(kOps[0]))];
      r.nth = rng_.between(1, 6);
      r.times = rng_.one_in(5) ? FaultRule::kForever : rng_.between(1, 3);
      r.one_in = rng_.one_in(3) ? rng_.between(2, 10) : 0;
      r.target_contains = kTargets[rng_.uniform(6)];
    }
    const bool read_side = r.op == FaultOp::Read || r.op == FaultOp::Open;
    r.code = !read_side && rng_.one_in(4) ? Code::Quota : Code::IO;
    if (read_side) read_faults_ = true;
    desc += std::string(" ") + fault_op_name(r.op) + "#" + std::to_string(r.nth) + "x" +
            (r.times == FaultRule::kForever ? "inf" : std::to_string(r.times)) + "/" +
            std::to_string(r.one_in) + ":" + code_name(r.code) + "@'" + r.target_contains + "'";
    policy.rules.push_back(std::move(r));
  }
  if (!policy.rules.empty()) platform_->set_fault_policy(std::move(policy));
  if (quota) {
    uint64_t bytes = memory_->total_bytes(kPath) + rng_.uniform(64 * 1024);
    memory_->set_quota(kPath, bytes);
    desc += " quota=" + std::to_string(bytes);
  }
  note("faults armed:%s", desc.c_str());
  faults_active_ = true;
  armed_life_ = true;
  ++stats_.fault_phases;
}

inline void Simulation::stop_faults() {
  platform_->clear_faults();
  memory_->set_quota(kPath, MemoryPlatform::kNoQuota);
  if (faults_active_) note("faults cleared");
  faults_active_ = false;
  read_faults_ = false;
}

inline bool Simulation::flush_once(const char* what) {
  Future<Status> f = tree_->flush();
  for (int i = 0; i < 1000 && !f.ready(); ++i) memory_->queue_executor()->run_pending(16);
  if (!f.ready()) {
    const TreeStats st = tree_->stats();
    return fail(std::string(what) +
                ": the flush future never completed although background work ran (" +
                std::to_string(st.immutable_memtables) + " frozen memtables waiting, " +
                std::to_string(memory_->queue_executor()->pending()) + " tasks queued)");
  }
  Status s = f.get();
  note("%s: %s", what, show(s).c_str());
  if (s.ok()) {
    model_.mark_durable();  // the memtable is in a durable table now, the WAL before it synced
    ++stats_.flushes;
    return true;
  }
  if (!write_error_ok(s)) return fail(std::string(what) + ": " + show(s));
  return false;
}

inline void Simulation::op_flush() { (void)flush_once("flush"); }

inline void Simulation::op_compact() {
  // compact_all() waits for a flush first, which would block this thread for good if that flush
  // never completed: flush here first (and report such a flush), so compact_all's is a no-op.
  if (!flush_once("flush before compact_all")) return;
  Status s = tree_->compact_all();
  note("compact_all: %s", show(s).c_str());
  if (s.ok()) {
    model_.mark_durable();
    ++stats_.compactions;
  } else if (!write_error_ok(s)) {
    fail("compact_all: " + show(s));
  }
}

inline void Simulation::op_background() {
  const size_t n = rng_.between(1, 8);
  const size_t ran = memory_->queue_executor()->run_pending(n);
  note("run_pending(%zu): %zu tasks ran", n, ran);
}

inline void Simulation::op_busy() {
  Result<Tree> second = builder().build();
  note("second open while open: %s", show(second.status()).c_str());
  if (second.ok()) {
    (void)second->close();
    fail("a second open of an open tree succeeded (expected busy)");
  } else if (second.status().code() != Code::Busy) {
    fail("a second open of an open tree: " + show(second.status()) + ", expected busy");
  }
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_LIFECYCLE_H_
