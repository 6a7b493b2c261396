// Simulation: iterators. A scan creates a range or keys-only iterator over a random range, then
// runs a script on it — seek_first, seek_last or a seek (inside or outside the range), then skip
// N entries and read M, both directions, switching direction on the way, sometimes seeking again
// — and checks every position against the entries the model says the iterator must show. Some
// iterators are held across later operations (commits, flushes, compactions) and moved again:
// they must keep showing the view they were created with.
//
// Thread safety: see simulation.h.

#ifndef SKV_TOOLS_SIM_SIM_SCAN_H_
#define SKV_TOOLS_SIM_SIM_SCAN_H_

#include <algorithm>

#include "tools/sim/simulation.h"

namespace skv::sim {

namespace detail {
enum Move { kSeekFirst, kSeekLast, kSeek, kNext, kPrev };
inline const char* move_name(int m) {
  static const char* const kNames[] = {"seek_first", "seek_last", "seek", "next", "prev"};
  return kNames[m];
}
}  // namespace detail

inline void Simulation::pick_range(std::string* start, std::string* end) {
  *start = rng_.one_in(4) ? std::string() : data_.bound();
  if (!start->empty() && rng_.one_in(4)) {
    *end = *start + "\xff";  // a narrow range: roughly the keys starting with *start
  } else {
    *end = rng_.one_in(4) ? std::string() : data_.bound();
  }
  // Mostly valid ranges; a few reversed ones, which must be refused.
  if (!start->empty() && !end->empty() && *end < *start && !rng_.one_in(8)) std::swap(*start, *end);
}

// `timed`: range_at or keys_at at a time at or after the horizon (sim_time_ops.h), which must
// show each key's version as of then among the snapshot's commits, own writes left out.
inline void Simulation::op_scan(bool hold, bool timed) {
  Txn* t = pick_txn();
  if (t == nullptr) return;
  std::string start, end;
  pick_range(&start, &end);
  const bool keys_only = rng_.one_in(3);
  const bool bad_time = timed && rng_.one_in(40);
  const uint64_t ts = !timed     ? 0
                      : bad_time ? kMaxTimestamp + 1 + rng_.uniform(1000)
                                 : pick_time("", t->snap);
  Result<Iterator> r = !timed      ? (keys_only ? t->tx.keys(start, end) : t->tx.range(start, end))
                       : keys_only ? t->tx.keys_at(start, end, ts)
                                   : t->tx.range_at(start, end, ts);
  const std::string label =
      "t" + std::to_string(t->id) +
      (timed ? (keys_only ? " keys_at " : " range_at ") + std::to_string(ts) + " ["
             : (keys_only ? " keys [" : " range [")) +
      printable(start) + ", " + printable(end) + ")";
  note("%s%s: %s", label.c_str(), hold ? " (held)" : "", show(r.status()).c_str());
  if (timed) ++stats_.timed_scans;
  const bool reversed = !start.empty() && !end.empty() && end < start;
  if (t->mode == Mode::WriteOnly || reversed || bad_time) {
    const Code want = t->mode != Mode::WriteOnly && timed && !versioned_ ? Code::NotSupported
                                                                         : Code::InvalidArgument;
    if (r.status().code() != want) {
      fail(label + ": " + show(r.status()) + ", expected " + code_name(want) + " (" +
           (t->mode == Mode::WriteOnly ? "write-only transaction)"
            : reversed                 ? "reversed range)"
                                       : "timestamp too large)"));
    }
    return;
  }
  if (timed && !versioned_) {
    if (r.status().code() != Code::NotSupported) {
      fail(label + ": " + show(r.status()) + ", expected not_supported (an unversioned tree)");
    }
    return;
  }
  if (!r.ok()) {
    if (read_error_ok(r.status())) {
      ++stats_.read_errors;
    } else {
      fail(label + ": " + show(r.status()));
    }
    return;
  }
  ++stats_.scans;
  Cursor c{std::move(r).value(),
           timed ? model_.view_at(start, end, ts, t->snap)
                 : model_.view(start, end, t->snap, &t->writes),
           keys_only, -1, label};
  if (c.it.valid()) {
    fail(label + ": a new iterator is valid before any seek");
    return;
  }
  if (rng_.one_in(16)) {
    const bool moved = c.it.next();
    if (moved || c.it.valid() || !c.it.status().ok()) {
      fail(label + ": next() on an unpositioned iterator moved or failed: " + show(c.it.status()) +
           ", expected a no-op returning false");
      return;
    }
  }
  if (!drive(c, true)) return;
  if (hold && held_.size() < kMaxHeld) held_.push_back(std::move(c));
}

inline void Simulation::op_held_step() {
  if (held_.empty() || rng_.one_in(6)) {
    if (!held_.empty()) {
      note("drop held iterator %s", held_.front().label.c_str());
      held_.erase(held_.begin());
    }
    op_scan(true, versioned_ && rng_.one_in(4));
    return;
  }
  const size_t i = rng_.uniform(held_.size());
  note("held iterator %s moves on", held_[i].label.c_str());
  ++stats_.scans;
  if (!drive(held_[i], held_[i].pos < 0 || rng_.one_in(3))) {
    if (!failed()) held_.erase(held_.begin() + static_cast<long>(i));  // an injected read error
  }
}

// Runs a script of moves on `c`: one to three segments, each an optional reposition (required
// when `seek_first_segment`) followed by "skip N, read M" moves in one direction, sometimes
// switching. Returns false when the iterator failed (an accepted read error, or a divergence).
inline bool Simulation::drive(Cursor& c, bool seek_first_segment) {
  const int segments = static_cast<int>(rng_.between(1, 3));
  for (int seg = 0; seg < segments; ++seg) {
    bool forward = true;
    if (seg > 0 || seek_first_segment) {
      const uint64_t r = rng_.uniform(10);
      const int move = r < 5 ? detail::kSeekFirst : r < 8 ? detail::kSeekLast : detail::kSeek;
      std::string target;
      if (move == detail::kSeek) {
        if (!c.expected.empty() && rng_.one_in(2)) {
          target = c.expected[rng_.uniform(c.expected.size())].key;  // inside the range
          if (rng_.one_in(3)) target.push_back('\0');
        } else {
          target = data_.bound();  // anywhere, inside the range or not
        }
      }
      forward = move != detail::kSeekLast;
      if (!apply_move(c, move, target, true)) return false;
    } else {
      forward = rng_.one_in(2);
    }
    const uint64_t skip = rng_.one_in(3) ? rng_.between(1, 6) : 0;
    const uint64_t read = rng_.one_in(4) ? 1000 : rng_.between(1, 20);  // 1000: to the end
    for (uint64_t i = 0; i < skip + read && c.pos >= 0; ++i) {
      if (rng_.one_in(10)) forward = !forward;
      if (!apply_move(c, forward ? detail::kNext : detail::kPrev, "", i >= skip)) return false;
    }
  }
  return true;
}

// Makes one move on the iterator and on the expected position, then checks them.
inline bool Simulation::apply_move(Cursor& c, int move, const std::string& target,
                                   bool read_value) {
  const long n = static_cast<long>(c.expected.size());
  bool returned = false;
  switch (move) {
    case detail::kSeekFirst:
      returned = c.it.seek_first();
      c.pos = n > 0 ? 0 : -1;
      break;
    case detail::kSeekLast:
      returned = c.it.seek_last();
      c.pos = n - 1;
      break;
    case detail::kSeek: {
      returned = c.it.seek(target);
      auto it = std::lower_bound(c.expected.begin(), c.expected.end(), target,
                                 [](const Expected& e, const std::string& k) { return e.key < k; });
      c.pos = it == c.expected.end() ? -1 : static_cast<long>(it - c.expected.begin());
      break;
    }
    case detail::kNext:
      returned = c.it.next();
      c.pos = c.pos + 1 < n ? c.pos + 1 : -1;
      break;
    default:
      returned = c.it.prev();
      c.pos = c.pos - 1;
      break;
  }
  std::string what = c.label + " " + detail::move_name(move);
  if (move == detail::kSeek) what += "(" + printable(target) + ")";
  if (returned != c.it.valid()) {
    return fail(what + " returned " + (returned ? "true" : "false") + " but valid() is " +
                (c.it.valid() ? "true" : "false"));
  }
  const Status s = c.it.status();
  if (!s.ok()) {
    note("%s: %s", what.c_str(), show(s).c_str());
    if (read_error_ok(s) && !c.it.valid()) {
      ++stats_.read_errors;
      return false;
    }
    return fail(what + ": " + show(s) + (c.it.valid() ? " (and the iterator is still valid)" : ""));
  }
  return check_cursor(c, what, read_value);
}

inline bool Simulation::check_cursor(Cursor& c, const std::string& what, bool read_value) {
  const bool valid = c.it.valid();
  const std::string want =
      c.pos >= 0 ? "key " + printable(c.expected[static_cast<size_t>(c.pos)].key) + " (entry " +
                       std::to_string(c.pos) + " of " + std::to_string(c.expected.size()) + ")"
                 : std::string("the end (invalid)");
  if (config_.verbose) {
    note("%s -> %s", what.c_str(), valid ? printable(c.it.key()).c_str() : "(invalid)");
  }
  if (!valid) {
    if (c.pos >= 0) return fail(what + ": iterator is invalid, expected " + want);
    if (!c.it.status().ok()) return fail(what + ": status " + show(c.it.status()));
    return true;
  }
  if (c.pos < 0)
    return fail(what + ": iterator is at " + printable(c.it.key()) + ", expected " + want);
  const Expected& e = c.expected[static_cast<size_t>(c.pos)];
  if (c.it.key() != e.key) {
    return fail(what + ": iterator is at " + printable(c.it.key()) + ", expected " + want);
  }
  if (c.it.timestamp() != e.ts) {
    return fail(what + ": timestamp " + std::to_string(c.it.timestamp()) + " at " +
                printable(e.key) + ", expected " + std::to_string(e.ts) +
                (e.own ? " (an uncommitted write)" : ""));
  }
  if (!read_value) return true;
  Result<std::string_view> v = c.it.value();
  if (c.keys_only) {
    if (v.status().code() != Code::InvalidArgument) {
      return fail(what + ": value() on a keys-only iterator: " + show(v.status()) +
                  ", expected invalid_argument");
    }
    return true;
  }
  if (!v.ok()) {
    // A value kept in a value log is read by value(): an injected read fault surfaces here, and
    // must stop the iterator with the same error.
    note("%s: value(): %s", what.c_str(), show(v.status()).c_str());
    if (read_error_ok(v.status()) && !c.it.valid() && c.it.status().code() == v.status().code()) {
      ++stats_.read_errors;
      return false;
    }
    return fail(what + ": value(): " + show(v.status()) +
                (c.it.valid() ? " (and the iterator is still valid)" : ""));
  }
  if (*v != *e.value) {
    return fail(what + ": value at " + printable(e.key) + " is " + printable(*v) + ", expected " +
                printable(*e.value));
  }
  return true;
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_SCAN_H_
