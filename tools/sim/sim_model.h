// Model: the reference the simulation holds skv to. It keeps every committed version of every key
// (numbered by commit, 1, 2, ..., with its timestamp: the commit's, or the one set_at gave it), so
// it can answer reads at any transaction's snapshot, reads by time (get_at, history, range_at),
// decide conflicts (first committer wins), and, after a crash, tell whether what the engine
// recovered is the state after some prefix of the commit order.
//
// Versions by time: the version "as of T" of a key is its version with the newest timestamp at or
// before T (of two with the same timestamp, the later commit). Retention lets compaction drop
// versions at or before its cutoff (the clock minus the retention) except the newest one there, so
// reads by time are exact only from the *horizon* on, the latest cutoff any compaction may have
// used; the caller passes it where it matters.
//
// Durability: `durable_floor` is the last commit that must survive a crash (the newest commit
// acknowledged as Immediate, or covered by a successful flush, a clean close or a recovery).
// Commits that failed with an injected I/O error have an uncertain outcome: they are kept apart
// ("pending") and a recovery may show them or not, in order, after every certain commit.
//
// Thread safety: none; one model per simulation.

#ifndef SKV_TOOLS_SIM_SIM_MODEL_H_
#define SKV_TOOLS_SIM_SIM_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/sim/sim_types.h"

namespace skv::sim {

// A value; null means "deleted" (in a write set) or "absent".
using Value = std::shared_ptr<const std::string>;
// One buffered write: a value (null: a delete) and the timestamp set_at gave it (0: the commit's).
struct Write {
  Write() = default;
  Write(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): a delete
  Write(Value v, uint64_t t = 0) : value(std::move(v)), ts(t) {}  // NOLINT
  Value value;
  uint64_t ts = 0;
};
// A transaction's buffered writes, by key.
using WriteSet = std::map<std::string, Write, std::less<>>;
// A whole tree's contents as read back from the engine.
using State = std::vector<std::pair<std::string, std::string>>;

inline Value make_value(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// One entry a read is expected to return.
struct Expected {
  std::string key;
  Value value;       // never null, except for a tombstone in a history
  bool own = false;  // the transaction's own uncommitted write (timestamp 0)
  uint64_t ts = 0;   // the version's timestamp (0 for an own write)
};

// What Model::recover() may compare besides the keys and values.
struct RecoveryInput {
  const std::vector<uint64_t>* stamps = nullptr;  // the timestamp of each entry of `actual`
  // A versioned tree: reads the digest of its versions above `horizon` (the sum of their
  // version_hash), called only if keys, values and timestamps leave more than one candidate,
  // or always with `always_read_versions`.
  std::function<uint64_t()> versions;
  uint64_t horizon = 0;
  bool always_read_versions = false;
};

class Model {
 public:
  uint64_t last_commit() const { return last_; }
  uint64_t durable_floor() const { return floor_; }
  size_t pending() const { return pending_.size(); }
  // The commit timestamp of `commit` (0 for commit 0).
  uint64_t commit_timestamp(uint64_t commit) const {
    return commit == 0 ? 0 : commit_ts_[static_cast<size_t>(commit - 1)];
  }
  // After recover(): the commit timestamp of the shortest prefix of the commit order that
  // matches what was recovered (the engine's last commit timestamp is at least this).
  uint64_t recovered_timestamp_floor() const { return recovered_ts_floor_; }

  // The value of `key` at `snap`, seen through `own` writes (may be null). Null if absent.
  Value get(std::string_view key, uint64_t snap, const WriteSet* own) const {
    if (own != nullptr) {
      auto w = own->find(key);
      if (w != own->end()) return w->second.value;
    }
    auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    const Version* v = at(it->second, snap);
    return v == nullptr ? nullptr : v->value;
  }

  // The value of `key` as of `ts` among the commits up to `snap`. Null if absent then.
  Value get_at(std::string_view key, uint64_t ts, uint64_t snap) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    const Version* v = as_of(it->second, ts, snap);
    return v == nullptr ? nullptr : v->value;
  }

  // The versions of `key` up to `snap`, newest timestamp first (then the later commit first),
  // tombstones (null values) included if asked.
  std::vector<Expected> history(std::string_view key, uint64_t snap, bool tombstones) const {
    std::vector<Expected> out;
    auto it = keys_.find(key);
    if (it == keys_.end()) return out;
    std::vector<const Version*> vs;
    for (const Version& v : it->second) {
      if (v.commit <= snap && (tombstones || v.value)) vs.push_back(&v);
    }
    std::sort(vs.begin(), vs.end(),
              [](const Version* a, const Version* b) { return newer(*a, *b); });
    for (const Version* v : vs) out.push_back(Expected{it->first, v->value, false, v->ts});
    return out;
  }

  // The timestamp of the newest version of `key` (tombstones included) at or before `ts`, up to
  // `snap`, and whether it is a tombstone; false if there is none.
  bool newest_at_or_before(std::string_view key, uint64_t ts, uint64_t snap, uint64_t* found,
                           bool* tombstone) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return false;
    const Version* v = as_of(it->second, ts, snap);
    if (v == nullptr) return false;
    *found = v->ts;
    *tombstone = !v->value;
    return true;
  }

  // The live entries in [start, end) as of `ts`, among the commits up to `snap`.
  std::vector<Expected> view_at(std::string_view start, std::string_view end, uint64_t ts,
                                uint64_t snap) const {
    std::vector<Expected> out;
    for (auto a = start.empty() ? keys_.begin() : keys_.lower_bound(start); a != keys_.end(); ++a) {
      if (!end.empty() && a->first >= end) break;
      const Version* v = as_of(a->second, ts, snap);
      if (v != nullptr && v->value) out.push_back(Expected{a->first, v->value, false, v->ts});
    }
    return out;
  }

  // The keys in [start, end) that have a version up to `snap`, in order.
  std::vector<std::string> keys_in(std::string_view start, std::string_view end,
                                   uint64_t snap) const {
    std::vector<std::string> out;
    for (auto a = start.empty() ? keys_.begin() : keys_.lower_bound(start); a != keys_.end(); ++a) {
      if (!end.empty() && a->first >= end) break;
      if (!a->second.empty() && a->second.front().commit <= snap) out.push_back(a->first);
    }
    return out;
  }

  // The live entries in [start, end) at `snap` through `own` (empty bounds are open), in order.
  std::vector<Expected> view(std::string_view start, std::string_view end, uint64_t snap,
                             const WriteSet* own) const {
    std::vector<Expected> out;
    auto a = start.empty() ? keys_.begin() : keys_.lower_bound(start);
    WriteSet none;
    const WriteSet& w = own != nullptr ? *own : none;
    auto b = start.empty() ? w.begin() : w.lower_bound(start);
    auto in_range = [&](const std::string& k) { return end.empty() || k < end; };
    while (true) {
      const bool has_a = a != keys_.end() && in_range(a->first);
      const bool has_b = b != w.end() && in_range(b->first);
      if (!has_a && !has_b) break;
      if (has_b && (!has_a || b->first <= a->first)) {
        if (has_a && a->first == b->first) ++a;
        if (b->second.value) out.push_back(Expected{b->first, b->second.value, true, 0});
        ++b;
        continue;
      }
      const Version* v = at(a->second, snap);
      if (v != nullptr && v->value) out.push_back(Expected{a->first, v->value, false, v->ts});
      ++a;
    }
    return out;
  }

  // True if a commit after `snap` wrote a key of `writes`; names one such key in *key.
  bool conflicts(const WriteSet& writes, uint64_t snap, std::string* key) const {
    for (const auto& [k, v] : writes) {
      auto it = keys_.find(k);
      if (it != keys_.end() && !it->second.empty() && it->second.back().commit > snap) {
        *key = k;
        return true;
      }
    }
    return false;
  }

  // Records a commit acknowledged OK, stamped `commit_ts`. Uncertain commits before it cannot
  // have happened (the engine went on without them), so they are dropped.
  void apply(const WriteSet& writes, uint64_t commit_ts) {
    ++last_;
    commit_ts_.push_back(commit_ts);
    for (const auto& [k, w] : writes) {
      const uint64_t ts = w.ts != 0 ? w.ts : commit_ts;
      const uint64_t eh = entry_hash(k, w.value);
      keys_[k].push_back(Version{last_, w.value, ts, eh, version_hash_of(eh, ts, !w.value)});
    }
    pending_.clear();
  }
  // Records a commit whose outcome is unknown (it failed with an injected I/O error after it was
  // stamped `commit_ts`).
  void add_uncertain(WriteSet writes, uint64_t commit_ts) {
    pending_.push_back(Pending{std::move(writes), commit_ts});
  }
  // Every certain commit so far must survive a crash.
  void mark_durable() { floor_ = last_; }

  // Forgets the newest commits whose commit timestamp is above `ts`: the engine's last commit
  // timestamp showed they did not survive (a recovery could not tell them apart: they changed
  // nothing it reads). Returns how many, or -1 if that would reach the durable floor.
  long forget_commits_after_timestamp(uint64_t ts) {
    uint64_t c = last_;
    while (c > 0 && commit_timestamp(c) > ts) --c;
    if (c < floor_) return -1;
    const long n = static_cast<long>(last_ - c);
    truncate(c);
    return n;
  }

  // Forgets versions no reader can see any more: readers hold snapshots >= oldest. With
  // `versioned`, a version stays while a read by time at or after `horizon` may still need it:
  // one is dropped only if a newer one (by commit) hides it from plain reads and a newer one (by
  // timestamp) at or before the horizon hides it from reads by time, both visible to every
  // reader.
  void prune(uint64_t oldest, bool versioned = false, uint64_t horizon = 0) {
    const uint64_t keep = std::min(oldest, floor_);
    for (auto it = keys_.begin(); it != keys_.end();) {
      auto& vs = it->second;
      size_t first = 0;
      while (first + 1 < vs.size() && vs[first + 1].commit <= keep) ++first;
      if (!versioned) {
        vs.erase(vs.begin(), vs.begin() + static_cast<long>(first));
        if (!vs.empty() && vs.front().commit <= keep && !vs.front().value) vs.erase(vs.begin());
      } else if (first > 0) {
        const Version* best = as_of(vs, horizon, keep);
        const uint64_t best_commit = best == nullptr ? 0 : best->commit;
        size_t out = 0;
        for (size_t i = 0; i < vs.size(); ++i) {
          const bool hidden =
              i < first && vs[i].ts <= horizon && best != nullptr && vs[i].commit != best_commit;
          if (!hidden) vs[out++] = std::move(vs[i]);
        }
        vs.resize(out);
      }
      it = vs.empty() ? keys_.erase(it) : std::next(it);
    }
  }

  // The digest recover() compares versions by: `versions` (from Transaction::history_range with
  // tombstones) summed over the entries with a timestamp above the horizon.
  static uint64_t version_hash(std::string_view key, uint64_t ts, const std::string* value) {
    return version_hash_of(entry_hash(key, value), ts, value == nullptr);
  }
  // The same for a version read from an iterator (`value` is ignored for a tombstone).
  static uint64_t version_hash(std::string_view key, uint64_t ts, bool tombstone,
                               std::string_view value) {
    return version_hash_of(tombstone ? 0 : entry_hash(key, value), ts, tombstone);
  }

  // Checks `actual`, the whole tree read after a reopen, against the states after commits
  // floor..last (only `last` if !allow_loss), then the uncertain ones in order. On a match the
  // model becomes that state and "" is returned; else a description of the mismatch. The state
  // becomes the durable floor if `durable` (after a crash, what survived is on stable storage; a
  // close that failed to sync leaves the recovered commits as fragile as before). Timestamps
  // and versions (`in`) tell apart commits that leave the keys and values as they were (a value
  // written again, a delete of an absent key). Where even they cannot tell prefixes apart, the
  // longest is taken and only the shortest becomes the durable floor.
  std::string recover(const State& actual, bool allow_loss, bool durable, uint64_t* lost,
                      const RecoveryInput& in = {}) {
    const uint64_t from = allow_loss ? floor_ : last_;
    const size_t certain = static_cast<size_t>(last_ - from);
    const uint64_t horizon = in.horizon;
    // A live entry's digest: its entry_hash, stamped with its timestamp if those are compared.
    auto stamped = [&in](uint64_t eh, uint64_t ts) {
      return eh == 0 || in.stamps == nullptr ? eh : mix(eh + ts * 0x9e3779b97f4a7c15ull);
    };
    auto plain = [&](std::string_view key, const std::string* value, uint64_t ts) {
      return stamped(entry_hash(key, value), ts);
    };
    // [i]: the digests after commit from + i (past the certain ones: after pending ones).
    std::vector<uint64_t> hash(certain + pending_.size() + 1, 0), vhash(hash.size(), 0);
    for (const auto& [key, vs] : keys_) {
      const Version* old = at(vs, from);
      hash[0] += old == nullptr ? 0 : stamped(old->eh, old->ts);
      for (const Version& v : vs) {
        const size_t i = v.commit <= from ? 0 : static_cast<size_t>(v.commit - from);
        if (v.ts > horizon) vhash[i] += v.vh;
        if (i == 0) continue;
        hash[i] += stamped(v.eh, v.ts) - (old == nullptr ? 0 : stamped(old->eh, old->ts));
        old = &v;
      }
    }
    // Pending writes applied so far, over the state at last_, with their timestamps.
    std::map<std::string, std::pair<Value, uint64_t>, std::less<>> overlay;
    for (size_t p = 0; p < pending_.size(); ++p) {
      for (const auto& [k, w] : pending_[p].writes) {
        const uint64_t ts = w.ts != 0 ? w.ts : pending_[p].ts;
        auto o = overlay.find(k);
        uint64_t before = 0;
        if (o != overlay.end()) {
          before = plain(k, o->second.first.get(), o->second.second);
        } else if (auto it = keys_.find(k); it != keys_.end()) {
          const Version* v = at(it->second, last_);
          if (v != nullptr) before = stamped(v->eh, v->ts);
        }
        hash[certain + 1 + p] += plain(k, w.value.get(), ts) - before;
        if (ts > horizon) vhash[certain + 1 + p] += version_hash(k, ts, w.value.get());
        overlay[k] = {w.value, ts};
      }
    }
    for (size_t i = 1; i < hash.size(); ++i) {
      hash[i] += hash[i - 1];
      vhash[i] += vhash[i - 1];
    }
    uint64_t target = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      target +=
          plain(actual[i].first, &actual[i].second, in.stamps != nullptr ? (*in.stamps)[i] : 0);
    }
    std::optional<uint64_t> versions;
    if (in.versions) {
      const size_t candidates = static_cast<size_t>(std::count(hash.begin(), hash.end(), target));
      if (candidates > 1 || in.always_read_versions) versions = in.versions();
    }
    auto matches = [&](size_t i) {
      return hash[i] == target && (!versions || vhash[i] == *versions);
    };

    for (size_t i = hash.size(); i-- > 0;) {
      if (!matches(i)) continue;
      if (!first_difference(actual, state_at(from, i)).empty()) continue;  // a hash collision
      // The shortest matching prefix bounds the engine's last commit timestamp from below.
      size_t shortest = i;
      for (size_t j = i; j-- > 0;) {
        if (matches(j)) shortest = j;
      }
      recovered_ts_floor_ = shortest <= certain ? commit_timestamp(from + shortest)
                                                : pending_[shortest - certain - 1].ts;
      if (i <= certain) {
        *lost = certain - i;
        truncate(from + i);
      } else {
        *lost = 0;
        std::vector<Pending> survived(pending_.begin(),
                                      pending_.begin() + static_cast<long>(i - certain));
        for (const Pending& p : survived) apply(p.writes, p.ts);
      }
      pending_.clear();
      if (durable) floor_ = std::min(last_, from + shortest);
      return "";
    }
    std::string msg = "recovered state (" + std::to_string(actual.size()) +
                      " keys) is not the state after any prefix of the commit order: commits " +
                      std::to_string(from) + ".." + std::to_string(last_);
    if (!pending_.empty()) msg += " (+" + std::to_string(pending_.size()) + " uncertain)";
    auto against = [&](size_t i) {
      std::string d = first_difference(actual, state_at(from, i));
      return d.empty() ? std::string("the same keys and values, but other timestamps or versions")
                       : d;
    };
    msg += " could survive; against commit " + std::to_string(from) + ": " + against(0);
    if (hash.size() > 1) msg += "; against the newest: " + against(hash.size() - 1);
    return msg;
  }

 private:
  struct Version {
    uint64_t commit;
    Value value;  // null: deleted
    uint64_t ts;
    uint64_t eh;  // entry_hash(key, value), 0 for a tombstone
    uint64_t vh;  // version_hash(key, ts, value)
  };
  struct Pending {
    WriteSet writes;
    uint64_t ts;  // the commit timestamp it was given
  };

  // The newest version visible at `snap`, or null.
  static const Version* at(const std::vector<Version>& vs, uint64_t snap) {
    for (size_t i = vs.size(); i-- > 0;) {
      if (vs[i].commit <= snap) return &vs[i];
    }
    return nullptr;
  }
  // Newer by time: the later timestamp, or of equal ones the later commit.
  static bool newer(const Version& a, const Version& b) {
    return a.ts != b.ts ? a.ts > b.ts : a.commit > b.commit;
  }
  // The version as of `ts` among those visible at `snap`, or null.
  static const Version* as_of(const std::vector<Version>& vs, uint64_t ts, uint64_t snap) {
    const Version* best = nullptr;
    for (const Version& v : vs) {
      if (v.commit <= snap && v.ts <= ts && (best == nullptr || newer(v, *best))) best = &v;
    }
    return best;
  }

  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Eight bytes at a time: the values run to kilobytes and every reopen hashes the whole tree.
  static uint64_t hash_bytes(std::string_view s, uint64_t h) {
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = mix(h ^ w) + 0x9e3779b97f4a7c15ull;
    }
    uint64_t tail = 0;
    if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
    return mix(h ^ tail ^ (static_cast<uint64_t>(s.size()) << 56));
  }
  static uint64_t version_hash_of(uint64_t eh, uint64_t ts, bool tombstone) {
    return mix(eh + mix(ts ^ 0x5bd1e9955bd1e995ull) + (tombstone ? 1 : 0));
  }
  // An order-independent digest of a state is the sum of its entries' hashes; absent is 0.
  static uint64_t entry_hash(std::string_view key, std::string_view v) {
    return mix(hash_bytes(key, 0xcbf29ce484222325ull) ^
               mix(hash_bytes(v, 0x84222325cbf29ce4ull) + v.size()));
  }
  static uint64_t entry_hash(std::string_view key, const std::string* v) {
    return v == nullptr ? 0 : entry_hash(key, std::string_view(*v));
  }
  static uint64_t entry_hash(std::string_view key, const Value& v) {
    return entry_hash(key, v.get());
  }

  // The state after commit from + i (i past the certain ones: after that many pending ones).
  State state_at(uint64_t from, size_t i) const {
    const size_t certain = static_cast<size_t>(last_ - from);
    State out;
    if (i <= certain) {
      for (const Expected& e : view("", "", from + i, nullptr)) out.emplace_back(e.key, *e.value);
      return out;
    }
    WriteSet overlay;
    for (size_t p = 0; p < i - certain; ++p) {
      for (const auto& [k, w] : pending_[p].writes) overlay[k] = w;
    }
    for (const Expected& e : view("", "", last_, &overlay)) out.emplace_back(e.key, *e.value);
    return out;
  }

  // "" if equal, else the first key where they differ.
  static std::string first_difference(const State& actual, const State& expected) {
    size_t i = 0;
    while (i < actual.size() && i < expected.size() && actual[i] == expected[i]) ++i;
    if (i == actual.size() && i == expected.size()) return "";
    if (i == actual.size()) return "key " + printable(expected[i].first) + " is missing";
    if (i == expected.size()) return "unexpected key " + printable(actual[i].first);
    if (actual[i].first != expected[i].first) {
      return actual[i].first < expected[i].first
                 ? "unexpected key " + printable(actual[i].first)
                 : "key " + printable(expected[i].first) + " is missing";
    }
    return "key " + printable(actual[i].first) + " holds " + printable(actual[i].second) +
           ", expected " + printable(expected[i].second);
  }

  // Forgets every commit after `commit`.
  void truncate(uint64_t commit) {
    for (auto it = keys_.begin(); it != keys_.end();) {
      auto& vs = it->second;
      while (!vs.empty() && vs.back().commit > commit) vs.pop_back();
      it = vs.empty() ? keys_.erase(it) : std::next(it);
    }
    last_ = commit;
    commit_ts_.resize(static_cast<size_t>(commit));
  }

  std::map<std::string, std::vector<Version>, std::less<>> keys_;
  uint64_t last_ = 0;
  uint64_t floor_ = 0;
  std::vector<uint64_t> commit_ts_;  // [i]: the timestamp of commit i + 1
  uint64_t recovered_ts_floor_ = 0;
  std::vector<Pending> pending_;
};

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_MODEL_H_
