// Simulation: transactions — begin in every mode, buffered writes, point reads, counts, commits
// (whose outcome, OK or Conflict, must be the model's), rollbacks and savepoints.
//
// Thread safety: see simulation.h.

#ifndef SKV_TOOLS_SIM_SIM_TXN_OPS_H_
#define SKV_TOOLS_SIM_SIM_TXN_OPS_H_

#include <algorithm>

#include "tools/sim/simulation.h"

namespace skv::sim {

namespace detail {
inline const char* mode_name(Mode m) {
  switch (m) {
    case Mode::ReadWrite:
      return "read-write";
    case Mode::ReadOnly:
      return "read-only";
    case Mode::WriteOnly:
      return "write-only";
  }
  return "?";
}
}  // namespace detail

inline Simulation::Txn* Simulation::pick_txn(bool for_write) {
  if (txns_.empty()) {
    op_begin();
    return txns_.empty() ? nullptr : &txns_.back();
  }
  if (for_write && !rng_.one_in(10)) {
    // Writes mostly go to transactions that take them (a few still try read-only ones).
    std::vector<Txn*> writable;
    for (Txn& t : txns_) {
      if (t.mode != Mode::ReadOnly) writable.push_back(&t);
    }
    if (!writable.empty()) return writable[rng_.uniform(writable.size())];
  }
  return &txns_[rng_.uniform(txns_.size())];
}

inline void Simulation::erase_txn(const Txn& t) {
  const int id = t.id;
  txns_.erase(std::find_if(txns_.begin(), txns_.end(), [id](const Txn& x) { return x.id == id; }));
}

inline void Simulation::op_begin() {
  if (txns_.size() >= kMaxTxns) {
    rng_.one_in(2) ? op_commit() : op_rollback();
    return;
  }
  const uint64_t r = rng_.uniform(100);
  const Mode mode = r < 70 ? Mode::ReadWrite : r < 85 ? Mode::ReadOnly : Mode::WriteOnly;
  Result<Transaction> tx = tree_->begin_with_mode(mode);
  if (!tx.ok()) {
    fail(std::string("begin ") + detail::mode_name(mode) + ": " + show(tx.status()));
    return;
  }
  if (tx->mode() != mode) {
    fail(std::string("begin ") + detail::mode_name(mode) + ": mode() says " +
         detail::mode_name(tx->mode()));
    return;
  }
  txns_.push_back(Txn{next_txn_id_++, std::move(tx).value(), mode, model_.last_commit(), {}, {}});
  note("begin t%d %s at commit %llu", txns_.back().id, detail::mode_name(mode),
       static_cast<unsigned long long>(txns_.back().snap));
}

inline void Simulation::op_set(bool del) {
  Txn* t = pick_txn(true);
  if (t == nullptr) return;
  const std::string key = data_.key();
  const std::string value = del ? std::string() : data_.value(step_);
  Status s = del ? t->tx.del(key) : t->tx.set(key, value);
  note("t%d %s %s%s%s: %s", t->id, del ? "del" : "set", printable(key).c_str(), del ? "" : " = ",
       del ? "" : printable(value).c_str(), show(s).c_str());
  const Code want = t->mode == Mode::ReadOnly ? Code::ReadOnly : Code::Ok;
  if (s.code() != want) {
    fail("t" + std::to_string(t->id) + (del ? " del " : " set ") + printable(key) + ": " + show(s) +
         ", expected " + code_name(want));
    return;
  }
  if (s.ok()) t->writes[key] = del ? Write() : Write(make_value(value));
}

// Many writes in one transaction, so trees grow and commits get large.
inline void Simulation::op_bulk() {
  Txn* t = pick_txn(true);
  if (t == nullptr) return;
  const uint64_t n = rng_.between(5, 60);
  note("t%d bulk of %llu writes", t->id, static_cast<unsigned long long>(n));
  for (uint64_t i = 0; i < n; ++i) {
    const std::string key = data_.key();
    const bool del = rng_.one_in(6);
    const std::string value = del ? std::string() : data_.value(step_);
    Status s = del ? t->tx.del(key) : t->tx.set(key, value);
    const Code want = t->mode == Mode::ReadOnly ? Code::ReadOnly : Code::Ok;
    if (s.code() != want) {
      fail("t" + std::to_string(t->id) + (del ? " del " : " set ") + printable(key) + ": " +
           show(s) + ", expected " + code_name(want));
      return;
    }
    if (!s.ok()) return;
    t->writes[key] = del ? Write() : Write(make_value(value));
  }
}

inline void Simulation::op_bad_key() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  const std::string key = rng_.one_in(2) ? std::string() : std::string(kMaxKeySize + 1, 'x');
  const int which = static_cast<int>(rng_.uniform(3));
  Status s = which == 0   ? t->tx.set(key, "v")
             : which == 1 ? t->tx.del(key)
                          : t->tx.get(key).status();
  const Code want = which < 2 && t->mode == Mode::ReadOnly ? Code::ReadOnly : Code::InvalidArgument;
  note("t%d %s with a key of %zu bytes: %s", t->id,
       which == 0   ? "set"
       : which == 1 ? "del"
                    : "get",
       key.size(), show(s).c_str());
  if (s.code() != want) {
    fail("t" + std::to_string(t->id) + " op with a key of " + std::to_string(key.size()) +
         " bytes: " + show(s) + ", expected " + code_name(want));
  }
}

inline void Simulation::op_get() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  const std::string key = rng_.one_in(8) ? data_.bound() : data_.key();
  Result<std::optional<std::string>> r = t->tx.get(key);
  ++stats_.reads;
  const std::string what = "t" + std::to_string(t->id) + " get " + printable(key);
  if (t->mode == Mode::WriteOnly) {
    note("%s: %s", what.c_str(), show(r.status()).c_str());
    if (r.status().code() != Code::InvalidArgument) {
      fail(what + " on a write-only transaction: " + show(r.status()) +
           ", expected invalid_argument");
    }
    return;
  }
  if (!r.ok()) {
    note("%s: %s", what.c_str(), show(r.status()).c_str());
    if (read_error_ok(r.status())) {
      ++stats_.read_errors;
    } else {
      fail(what + ": " + show(r.status()));
    }
    return;
  }
  const Value want = model_.get(key, t->snap, &t->writes);
  note("%s: %s", what.c_str(), r->has_value() ? printable(**r).c_str() : "(none)");
  if (r->has_value() != (want != nullptr) || (want && **r != *want)) {
    fail(what + " (snapshot at commit " + std::to_string(t->snap) + "): got " +
         (r->has_value() ? printable(**r) : std::string("(none)")) + ", expected " + show(want));
  }
}

inline void Simulation::op_count() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  std::string start, end;
  pick_range(&start, &end);
  Result<uint64_t> n = t->tx.count(start, end);
  ++stats_.reads;
  const std::string what =
      "t" + std::to_string(t->id) + " count [" + printable(start) + ", " + printable(end) + ")";
  note("%s: %s", what.c_str(), n.ok() ? std::to_string(*n).c_str() : show(n.status()).c_str());
  const bool reversed = !start.empty() && !end.empty() && end < start;
  if (t->mode == Mode::WriteOnly || reversed) {
    if (n.status().code() != Code::InvalidArgument) {
      fail(what + ": " + show(n.status()) + ", expected invalid_argument (" +
           (reversed ? "reversed range)" : "write-only transaction)"));
    }
    return;
  }
  if (!n.ok()) {
    if (read_error_ok(n.status())) {
      ++stats_.read_errors;
    } else {
      fail(what + ": " + show(n.status()));
    }
    return;
  }
  const size_t want = model_.view(start, end, t->snap, &t->writes).size();
  if (*n != want) fail(what + ": " + std::to_string(*n) + ", expected " + std::to_string(want));
}

inline void Simulation::op_commit() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  Durability d = options_.default_durability;
  if (rng_.percent(70)) {
    d = rng_.one_in(3) ? Durability::Immediate : Durability::Eventual;
    t->tx.set_durability(d);
  }
  const bool has_writes = !t->writes.empty();
  std::string conflict_key;
  const bool conflict = t->mode == Mode::ReadWrite && has_writes &&
                        model_.conflicts(t->writes, t->snap, &conflict_key);
  // The commit reads the clock when it gets its sequence number, before anything else can: a
  // commit that stalls then runs background work inline, whose jobs read it too (versioned
  // trees). One that is refused before that (a conflict, a sticky error) reads nothing.
  const uint64_t reading = clock_now();
  CommitFuture f = t->tx.commit();
  const uint64_t readings = clock_now() - reading;
  const uint64_t ts = std::min(kMaxTimestamp, std::max(reading, ts_last_ + 1));
  for (int i = 0; i < 1000 && !f.ready(); ++i) memory_->queue_executor()->run_pending(16);
  const std::string what = "t" + std::to_string(t->id) + " commit (" +
                           std::to_string(t->writes.size()) + " writes, " +
                           (d == Durability::Immediate ? "immediate" : "eventual") + ")";
  if (!f.ready()) {
    fail(what + ": the future never completed although background work ran");
    return;
  }
  Status s = f.get();
  note("%s: %s (clock %llu, %llu readings)", what.c_str(), show(s).c_str(),
       static_cast<unsigned long long>(reading), static_cast<unsigned long long>(readings));
  if ((readings == 0 && s.ok() && has_writes) || (readings != 0 && !has_writes) ||
      (readings > 1 && !versioned_)) {
    fail(what + ": " + show(s) + ", but it read the clock " + std::to_string(readings) + " times");
    return;
  }
  if (readings != 0) {
    // A timestamp was given out, whatever the outcome.
    if (ts_floor_ != ts_last_) {
      fail(what + ": the previous commit timestamp is unknown (the simulation lost track)");
      return;
    }
    ts_last_ = ts_floor_ = ts;
  }
  if (s.ok()) {
    if (conflict) {
      fail(what + " succeeded, but key " + printable(conflict_key) +
           " was written by a commit after its snapshot (commit " + std::to_string(t->snap) +
           "): expected conflict");
      return;
    }
    if (has_writes) {
      model_.apply(t->writes, ts);
      if (d == Durability::Immediate) model_.mark_durable();
      ++stats_.commits;
    }
  } else if (s.code() == Code::Conflict) {
    if (!conflict) {
      fail(what + ": " + show(s) + ", but no commit after its snapshot (commit " +
           std::to_string(t->snap) + ") wrote any of its keys");
      return;
    }
    ++stats_.conflicts;
  } else if (write_error_ok(s)) {
    ++stats_.commit_errors;
    // Stamped means queued: its bytes may have reached the log. Refused before that, it did not.
    if (!conflict && has_writes && readings != 0) model_.add_uncertain(t->writes, ts);
    if (!wal_failed_ && s.message().find("write-ahead log") != std::string::npos) {
      wal_failed_ = true;
      syncs_at_wal_failure_ = platform_->call_count(FaultOp::Sync);
    }
  } else {
    fail(what + ": " + show(s));
    return;
  }
  check_finished(*t);
  erase_txn(*t);
}

inline void Simulation::op_rollback() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  Status s = t->tx.rollback();
  note("t%d rollback: %s", t->id, show(s).c_str());
  if (!s.ok()) {
    fail("t" + std::to_string(t->id) + " rollback: " + show(s));
    return;
  }
  check_finished(*t);
  erase_txn(*t);
}

// Sometimes checks that a finished transaction refuses everything with Closed.
inline void Simulation::check_finished(Txn& t) {
  if (!rng_.one_in(8)) return;
  Status checks[] = {t.tx.set("k001", "x"), t.tx.get("k001").status(), t.tx.rollback(),
                     t.tx.commit().get(), t.tx.set_savepoint()};
  for (const Status& s : checks) {
    if (s.code() != Code::Closed) {
      fail("t" + std::to_string(t.id) + " after it finished: " + show(s) + ", expected closed");
      return;
    }
  }
}

inline void Simulation::op_savepoint() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  Status s = t->tx.set_savepoint();
  note("t%d set_savepoint: %s", t->id, show(s).c_str());
  if (!s.ok()) {
    fail("t" + std::to_string(t->id) + " set_savepoint: " + show(s));
    return;
  }
  t->savepoints.push_back(t->writes);
}

inline void Simulation::op_rollback_savepoint() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  Status s = t->tx.rollback_to_savepoint();
  note("t%d rollback_to_savepoint: %s", t->id, show(s).c_str());
  const Code want = t->savepoints.empty() ? Code::InvalidArgument : Code::Ok;
  if (s.code() != want) {
    fail("t" + std::to_string(t->id) + " rollback_to_savepoint: " + show(s) + ", expected " +
         code_name(want));
    return;
  }
  if (s.ok()) {
    t->writes = std::move(t->savepoints.back());
    t->savepoints.pop_back();
  }
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_TXN_OPS_H_
