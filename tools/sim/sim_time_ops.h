// Simulation: the clock and versioned queries — set_at, get_at, history, history_range (range_at
// and keys_at go through the iterator checks of sim_scan.h) — and the check that pins the commit
// timestamps down after a reopen that may have lost commits.
//
// On an unversioned seed every versioned call must be refused with NotSupported (after the checks
// that come first: Closed, ReadOnly for writes, InvalidArgument for reads in write-only
// transactions). On a versioned one, reads by time at or after the horizon (see sim_model.h)
// must be exact, and a history must hold every version above the horizon, newest first.
//
// Thread safety: see simulation.h.

#ifndef SKV_TOOLS_SIM_SIM_TIME_OPS_H_
#define SKV_TOOLS_SIM_SIM_TIME_OPS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "tools/sim/simulation.h"

namespace skv::sim {

// The latest retention cutoff any flush or compaction may have used: each one read the clock
// (below max_clock_) and subtracted the retention of its time. Reads by time are exact from here.
inline uint64_t Simulation::horizon() {
  max_clock_ = std::max(max_clock_, clock_now());
  const uint64_t now = retention_ == 0 || max_clock_ <= retention_ ? 0 : max_clock_ - retention_;
  return std::max(horizon_floor_, now);
}

inline void Simulation::set_retention(uint64_t retention) {
  if (retention == retention_) return;
  horizon_floor_ = horizon();
  retention_ = retention;
}

// The clock steps back a little (to before recent commits), far (behind the retention window),
// or jumps ahead. It also advances a little every step (sim.h).
inline void Simulation::op_clock() {
  FakeClock& clock = memory_->fake_clock();
  max_clock_ = std::max(max_clock_, clock.peek_nanos());
  const uint64_t r = rng_.uniform(10);
  const uint64_t now = clock.peek_nanos();
  if (r < 8) {
    const uint64_t far = retention_ != 0 ? 2 * retention_ : 4'000'000;
    const uint64_t back = r < 6 ? rng_.between(1, 20'000) : rng_.between(20'000, far);
    clock.set_nanos(now - std::min(back, now - 1));
    ++stats_.clock_steps_back;
  } else {
    clock.advance(rng_.between(10'000, 1'000'000));
  }
  note("clock %llu -> %llu (horizon %llu)", static_cast<unsigned long long>(now),
       static_cast<unsigned long long>(clock.peek_nanos()),
       static_cast<unsigned long long>(horizon()));
}

// A time to read `key` at, at or after the horizon: one of its versions' timestamps (or just
// around it), the horizon itself, a recent time, a little ahead, or the largest timestamp.
inline uint64_t Simulation::pick_time(const std::string& key, uint64_t snap) {
  const uint64_t hz = horizon();
  const uint64_t now = clock_now();
  const uint64_t span = retention_ != 0 ? retention_ : 2'000'000;
  uint64_t t = 0;
  switch (rng_.uniform(10)) {
    case 0:
    case 1:
    case 2:
    case 3: {
      std::vector<Expected> h =
          key.empty() ? std::vector<Expected>() : model_.history(key, snap, true);
      if (!h.empty()) {
        t = h[rng_.uniform(h.size())].ts;
        if (rng_.one_in(3)) t = rng_.one_in(2) ? t - 1 : std::min(t + 1, kMaxTimestamp);
        break;
      }
      t = now - std::min(now - 1, rng_.uniform(span));
      break;
    }
    case 4:
    case 5:
      t = now - std::min(now - 1, rng_.uniform(span));
      break;
    case 6:
      t = hz;
      break;
    case 7:
      t = now + rng_.uniform(5000);
      break;
    case 8:
      t = kMaxTimestamp;
      break;
    default:
      t = hz + rng_.uniform(now > hz ? now - hz + 1 : 1);
      break;
  }
  return std::max(t, hz);
}

inline void Simulation::op_set_at() {
  Txn* t = pick_txn(true);
  if (t == nullptr) return;
  const std::string key = data_.key();
  const std::string value = data_.value(step_);
  const uint64_t now = clock_now();
  const uint64_t hz = horizon();
  const uint64_t span = retention_ != 0 ? retention_ : 2'000'000;
  uint64_t ts = 0;
  bool bad = false;
  const uint64_t r = rng_.uniform(40);
  if (r < 14) {
    ts = now - std::min(now - 1, rng_.uniform(span));  // inside the window
  } else if (r < 22) {
    const uint64_t edge = hz != 0 ? hz : now - std::min(now - 1, span);
    ts = edge - std::min(edge - 1, rng_.uniform(span));  // behind it
  } else if (r < 30) {
    ts = now + rng_.uniform(20'000);  // a little ahead
  } else if (r < 35) {
    std::vector<Expected> h = model_.history(key, model_.last_commit(), true);
    ts = h.empty() ? now : h[rng_.uniform(h.size())].ts;  // the same time as another version
  } else if (r < 38) {
    ts = rng_.one_in(2) ? 1 : kMaxTimestamp;
  } else {
    bad = true;
    ts = rng_.one_in(2) ? 0 : kMaxTimestamp + 1 + rng_.uniform(1000);
  }
  Status s = t->tx.set_at(key, value, ts);
  ++stats_.timed_writes;
  note("t%d set_at %s = %s @%llu: %s", t->id, printable(key).c_str(), printable(value).c_str(),
       static_cast<unsigned long long>(ts), show(s).c_str());
  const Code want = t->mode == Mode::ReadOnly ? Code::ReadOnly
                    : !versioned_             ? Code::NotSupported
                    : bad                     ? Code::InvalidArgument
                                              : Code::Ok;
  if (s.code() != want) {
    fail("t" + std::to_string(t->id) + " set_at " + printable(key) + " @" + std::to_string(ts) +
         ": " + show(s) + ", expected " + code_name(want));
    return;
  }
  if (s.ok()) t->writes[key] = Write{make_value(value), ts};
}

inline void Simulation::op_get_at() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  const std::string key = rng_.one_in(8) ? data_.bound() : data_.key();
  const bool bad = rng_.one_in(40);
  const uint64_t ts = bad ? kMaxTimestamp + 1 + rng_.uniform(1000) : pick_time(key, t->snap);
  Result<std::optional<std::string>> r = t->tx.get_at(key, ts);
  ++stats_.timed_reads;
  const std::string what = "t" + std::to_string(t->id) + " get_at " + printable(key) + " @" +
                           std::to_string(ts) + " (snapshot at commit " + std::to_string(t->snap) +
                           ", horizon " + std::to_string(horizon()) + ")";
  note("%s: %s", what.c_str(),
       !r.ok()          ? show(r.status()).c_str()
       : r->has_value() ? printable(**r).c_str()
                        : "(none)");
  const Code want = t->mode == Mode::WriteOnly ? Code::InvalidArgument
                    : !versioned_              ? Code::NotSupported
                    : bad                      ? Code::InvalidArgument
                                               : Code::Ok;
  if (want != Code::Ok || !r.ok()) {
    if (r.status().code() == want) return;
    if (want == Code::Ok && read_error_ok(r.status())) {
      ++stats_.read_errors;
      return;
    }
    fail(what + ": " + show(r.status()) + ", expected " + code_name(want));
    return;
  }
  const Value expected = model_.get_at(key, ts, t->snap);
  if (r->has_value() != (expected != nullptr) || (expected && **r != *expected)) {
    fail(what + ": got " + (r->has_value() ? printable(**r) : std::string("(none)")) +
         ", expected " + show(expected));
  }
}

// `got` (the versions of `key` a history call returned, newest first) against the model: every
// version above the horizon, then the newest one at or before it, exactly and in order; older
// ones (which retention may or may not have dropped yet) only if they are older still. With no
// horizon (retention 0) the whole history is exact.
inline bool Simulation::check_versions(const std::string& what, const std::string& key,
                                       const std::vector<Expected>& got, uint64_t snap,
                                       bool tombstones, size_t limit) {
  const std::vector<Expected> want = model_.history(key, snap, tombstones);
  const uint64_t hz = horizon();
  size_t exact = 0;
  while (exact < want.size() && want[exact].ts > hz) ++exact;
  uint64_t newest_ts = 0;
  bool newest_tombstone = false;
  if (model_.newest_at_or_before(key, hz, snap, &newest_ts, &newest_tombstone) &&
      (tombstones || !newest_tombstone) && exact < want.size()) {
    ++exact;
  }
  const bool whole = hz == 0;
  if (whole) exact = want.size();
  if (limit != 0) exact = std::min(exact, limit);
  auto describe = [](const Expected& e) {
    return "@" + std::to_string(e.ts) + (e.value ? " = " + printable(*e.value) : " (tombstone)");
  };
  const std::string label = what + ": history of " + printable(key) + " (snapshot at commit " +
                            std::to_string(snap) + ", horizon " + std::to_string(hz) + ")";
  for (size_t i = 0; i < exact; ++i) {
    if (i >= got.size()) {
      return fail(label + " has " + std::to_string(got.size()) + " versions; missing " +
                  describe(want[i]) + " (version " + std::to_string(i) + " of " +
                  std::to_string(want.size()) + ")");
    }
    const bool same = got[i].ts == want[i].ts && !got[i].value == !want[i].value &&
                      (!got[i].value || *got[i].value == *want[i].value);
    if (!same) {
      return fail(label + ", version " + std::to_string(i) + ": " + describe(got[i]) +
                  ", expected " + describe(want[i]));
    }
  }
  const size_t most = whole ? (limit != 0 ? std::min(limit, want.size()) : want.size())
                            : (limit != 0 ? limit : got.size());
  if (got.size() > most) {
    return fail(label + " has " + std::to_string(got.size()) + " versions, expected " +
                std::to_string(most) + "; version " + std::to_string(most) + " is " +
                describe(got[most]));
  }
  for (size_t i = exact; i < got.size(); ++i) {
    if (got[i].ts > hz || (i > 0 && got[i].ts > got[i - 1].ts)) {
      return fail(label + ", version " + std::to_string(i) + ": " + describe(got[i]) +
                  " is not older than the versions before it and the horizon");
    }
  }
  return true;
}

inline void Simulation::op_history() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  const std::string key = data_.key();
  HistoryOptions o;
  o.include_tombstones = rng_.one_in(2);
  o.limit = rng_.one_in(4) ? rng_.between(1, 3) : 0;
  Result<std::vector<KeyVersion>> r = t->tx.history(key, o);
  ++stats_.timed_reads;
  const std::string what = "t" + std::to_string(t->id) + " history" +
                           (o.include_tombstones ? " with tombstones" : "") +
                           (o.limit != 0 ? " limit " + std::to_string(o.limit) : "");
  note("%s of %s: %s", what.c_str(), printable(key).c_str(),
       r.ok() ? (std::to_string(r->size()) + " versions").c_str() : show(r.status()).c_str());
  const Code want = t->mode == Mode::WriteOnly ? Code::InvalidArgument
                    : !versioned_              ? Code::NotSupported
                                               : Code::Ok;
  if (want != Code::Ok || !r.ok()) {
    if (r.status().code() == want) return;
    if (want == Code::Ok && read_error_ok(r.status())) {
      ++stats_.read_errors;
      return;
    }
    fail(what + " of " + printable(key) + ": " + show(r.status()) + ", expected " +
         code_name(want));
    return;
  }
  std::vector<Expected> got;
  for (const KeyVersion& v : *r) {
    if (v.tombstone && (!o.include_tombstones || !v.value.empty())) {
      fail(what + " of " + printable(key) + ": a tombstone @" + std::to_string(v.timestamp) +
           (o.include_tombstones ? " with a value" : " although tombstones were not asked for"));
      return;
    }
    got.push_back(Expected{key, v.tombstone ? nullptr : make_value(v.value), false, v.timestamp});
  }
  check_versions(what, key, got, t->snap, o.include_tombstones, o.limit);
}

// history_range over a random range: walked forward and backward (the same entries), every key's
// versions checked as history() is, and a seek.
inline void Simulation::op_history_range() {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  std::string start, end;
  pick_range(&start, &end);
  HistoryOptions o;
  o.include_tombstones = rng_.one_in(2);
  o.limit = rng_.one_in(4) ? 1 : 0;  // ignored by history_range
  Result<Iterator> r = t->tx.history_range(start, end, o);
  ++stats_.timed_scans;
  const std::string label = "t" + std::to_string(t->id) + " history_range [" + printable(start) +
                            ", " + printable(end) + ")" +
                            (o.include_tombstones ? " with tombstones" : "");
  note("%s: %s", label.c_str(), show(r.status()).c_str());
  const bool reversed = !start.empty() && !end.empty() && end < start;
  const Code want = t->mode == Mode::WriteOnly ? Code::InvalidArgument
                    : !versioned_              ? Code::NotSupported
                    : reversed                 ? Code::InvalidArgument
                                               : Code::Ok;
  if (want != Code::Ok || !r.ok()) {
    if (r.status().code() == want) return;
    if (want == Code::Ok && read_error_ok(r.status())) {
      ++stats_.read_errors;
      return;
    }
    fail(label + ": " + show(r.status()) + ", expected " + code_name(want));
    return;
  }
  Iterator& it = *r;
  std::vector<Expected> fwd;
  for (it.seek_first(); it.valid(); it.next()) {
    Expected e{std::string(it.key()), nullptr, false, it.timestamp()};
    if (it.is_tombstone() && !o.include_tombstones) {
      fail(label + ": a tombstone of " + printable(e.key) + " @" + std::to_string(e.ts));
      return;
    }
    if (!it.is_tombstone()) {
      Result<std::string_view> v = it.value();
      if (!v.ok()) break;  // judged with status() below
      e.value = make_value(std::string(*v));
    }
    fwd.push_back(std::move(e));
  }
  auto walk_failed = [&](const char* way) {
    const Status s = it.status();
    if (s.ok()) return false;
    if (read_error_ok(s) && !it.valid()) {
      ++stats_.read_errors;
    } else {
      fail(label + " " + way + ": " + show(s));
    }
    return true;
  };
  if (walk_failed("forward")) return;
  size_t back = fwd.size();
  for (it.seek_last(); it.valid(); it.prev()) {
    if (back == 0 || it.key() != fwd[back - 1].key || it.timestamp() != fwd[back - 1].ts ||
        it.is_tombstone() != !fwd[back - 1].value) {
      fail(label + ": backward, entry " + std::to_string(back) + " from the end is " +
           printable(it.key()) + " @" + std::to_string(it.timestamp()) +
           (back == 0 ? ", past the forward walk's first"
                      : ", forward it was " + printable(fwd[back - 1].key) + " @" +
                            std::to_string(fwd[back - 1].ts)));
      return;
    }
    --back;
  }
  if (walk_failed("backward")) return;
  if (back != 0) {
    fail(label + ": the backward walk ended " + std::to_string(back) +
         " entries before the forward walk's first");
    return;
  }
  // Each key's versions, and every key the model says must show.
  size_t i = 0;
  for (const std::string& key : model_.keys_in(start, end, t->snap)) {
    while (i < fwd.size() && fwd[i].key < key) {
      fail(label + ": versions of " + printable(fwd[i].key) + ", a key the model never had");
      return;
    }
    std::vector<Expected> got;
    for (; i < fwd.size() && fwd[i].key == key; ++i) got.push_back(fwd[i]);
    if (!check_versions(label, key, got, t->snap, o.include_tombstones, 0)) return;
  }
  if (i < fwd.size()) {
    fail(label + ": versions of " + printable(fwd[i].key) + ", a key the model never had");
    return;
  }
  // A seek lands on the newest version of the first key at or after its target.
  const std::string target =
      !fwd.empty() && rng_.one_in(2) ? fwd[rng_.uniform(fwd.size())].key : data_.bound();
  const bool valid = it.seek(target);
  auto at = std::lower_bound(fwd.begin(), fwd.end(), target,
                             [](const Expected& e, const std::string& k) { return e.key < k; });
  if (walk_failed("seek")) return;
  if (valid != (at != fwd.end()) || (valid && (it.key() != at->key || it.timestamp() != at->ts))) {
    fail(label + " seek(" + printable(target) + "): " +
         (valid ? printable(it.key()) + " @" + std::to_string(it.timestamp())
                : std::string("invalid")) +
         ", expected " +
         (at != fwd.end() ? printable(at->key) + " @" + std::to_string(at->ts)
                          : std::string("invalid")));
  }
}

// After a reopen that may have lost commits, the engine continues above the last commit
// timestamp it recovered, which lies between the last surviving commit's (ts_floor_) and the
// last one given out (ts_last_). One commit, read back, pins it down: its timestamp must be
// max(the clock reading, that + 1) for some such value.
inline bool Simulation::probe_commit_timestamp() {
  Result<Transaction> tx = tree_->begin_with_mode(Mode::WriteOnly);
  if (!tx.ok()) return fail("begin for a timestamp probe: " + show(tx.status()));
  const std::string key = "hot";
  const std::string value = "probe" + std::to_string(step_);
  Status s = tx->set(key, value);
  if (!s.ok()) return fail("timestamp probe: set: " + show(s));
  const uint64_t reading = clock_now();
  CommitFuture f = tx->commit();
  const uint64_t after = clock_now();
  for (int i = 0; i < 1000 && !f.ready(); ++i) memory_->queue_executor()->run_pending(16);
  if (!f.ready()) return fail("timestamp probe: the commit never completed");
  s = f.get();
  if (!s.ok()) return fail("timestamp probe: commit: " + show(s));
  if (after == reading || (after != reading + 1 && !versioned_)) {
    return fail("timestamp probe: the commit read the clock " + std::to_string(after - reading) +
                " times");
  }
  const uint64_t lo = std::min(kMaxTimestamp, std::max(reading, ts_floor_ + 1));
  const uint64_t hi = std::min(kMaxTimestamp, std::max(reading, ts_last_ + 1));
  Result<Transaction> rd = tree_->begin_with_mode(Mode::ReadOnly);
  if (!rd.ok()) return fail("begin after a timestamp probe: " + show(rd.status()));
  Result<Iterator> it = rd->range(key, key + std::string(1, '\0'));
  if (!it.ok()) return fail("reading a timestamp probe: " + show(it.status()));
  if (!it->seek_first() || it->key() != key) {
    return fail("reading a timestamp probe: " + printable(key) + " is missing (" +
                show(it->status()) + ")");
  }
  const uint64_t ts = it->timestamp();
  note("timestamp probe: clock %llu, previous commit timestamp %llu..%llu: got %llu",
       static_cast<unsigned long long>(reading), static_cast<unsigned long long>(ts_floor_),
       static_cast<unsigned long long>(ts_last_), static_cast<unsigned long long>(ts));
  if (ts < lo || ts > hi) {
    return fail("the first commit after a reopen got timestamp " + std::to_string(ts) +
                " with the clock at " + std::to_string(reading) +
                "; the last surviving commit had " + std::to_string(ts_floor_) +
                " and the last one given out " + std::to_string(ts_last_) + ", so expected " +
                std::to_string(lo) + ".." + std::to_string(hi));
  }
  // Above the clock reading, the timestamp names the engine's previous one exactly: commits
  // stamped after that were lost, although the recovery could not tell (they changed nothing
  // it reads, such as deletes of absent keys).
  if (ts != reading) {
    const long lost = model_.forget_commits_after_timestamp(ts - 1);
    if (lost < 0) {
      return fail("the first commit after a reopen got timestamp " + std::to_string(ts) +
                  ", so the engine recovered no commit stamped after " + std::to_string(ts - 1) +
                  ", but a durable one was (commit " + std::to_string(model_.durable_floor()) +
                  " @" + std::to_string(model_.commit_timestamp(model_.durable_floor())) + ")");
    }
    if (lost > 0) note("timestamp probe: %ld commits that changed nothing were lost", lost);
    if (model_.commit_timestamp(model_.last_commit()) < ts - 1) {
      note("timestamp probe: the engine continued above a lost commit's timestamp");
    }
  }
  model_.apply(WriteSet{{key, make_value(value)}}, ts);
  ts_last_ = ts_floor_ = ts;
  ++stats_.ts_probes;
  ++stats_.commits;
  return true;
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_TIME_OPS_H_
