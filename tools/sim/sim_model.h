// Model: the reference the simulation holds skv to. It keeps every committed version of every key
// (numbered by commit, 1, 2, ...), so it can answer reads at any transaction's snapshot, decide
// conflicts (first committer wins), and, after a crash, tell whether what the engine recovered is
// the state after some prefix of the commit order.
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
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/sim/sim_types.h"

namespace skv::sim {

// A value; null means "deleted" (in a write set) or "absent".
using Value = std::shared_ptr<const std::string>;
// A transaction's buffered writes, by key.
using WriteSet = std::map<std::string, Value, std::less<>>;
// A whole tree's contents as read back from the engine.
using State = std::vector<std::pair<std::string, std::string>>;

inline Value make_value(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// One entry a read is expected to return.
struct Expected {
  std::string key;
  Value value;       // never null
  bool own = false;  // the transaction's own uncommitted write (timestamp 0)
};

class Model {
 public:
  uint64_t last_commit() const { return last_; }
  uint64_t durable_floor() const { return floor_; }
  size_t pending() const { return pending_.size(); }

  // The value of `key` at `snap`, seen through `own` writes (may be null). Null if absent.
  Value get(std::string_view key, uint64_t snap, const WriteSet* own) const {
    if (own != nullptr) {
      auto w = own->find(key);
      if (w != own->end()) return w->second;
    }
    auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    const Version* v = at(it->second, snap);
    return v == nullptr ? nullptr : v->value;
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
        if (b->second) out.push_back(Expected{b->first, b->second, true});
        ++b;
        continue;
      }
      const Version* v = at(a->second, snap);
      if (v != nullptr && v->value) out.push_back(Expected{a->first, v->value, false});
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

  // Records a commit acknowledged OK. Uncertain commits before it cannot have happened (the
  // engine went on without them), so they are dropped.
  void apply(const WriteSet& writes) {
    ++last_;
    for (const auto& [k, v] : writes) keys_[k].push_back(Version{last_, v});
    pending_.clear();
  }
  // Records a commit whose outcome is unknown (it failed with an injected I/O error).
  void add_uncertain(WriteSet writes) { pending_.push_back(std::move(writes)); }
  // Every certain commit so far must survive a crash.
  void mark_durable() { floor_ = last_; }

  // Forgets versions no reader can see any more: readers hold snapshots >= oldest.
  void prune(uint64_t oldest) {
    const uint64_t keep = std::min(oldest, floor_);
    for (auto it = keys_.begin(); it != keys_.end();) {
      auto& vs = it->second;
      size_t first = 0;
      while (first + 1 < vs.size() && vs[first + 1].commit <= keep) ++first;
      vs.erase(vs.begin(), vs.begin() + static_cast<long>(first));
      if (!vs.empty() && vs.front().commit <= keep && !vs.front().value) vs.erase(vs.begin());
      it = vs.empty() ? keys_.erase(it) : std::next(it);
    }
  }

  // Checks `actual`, the whole tree read after a reopen, against the states after commits
  // floor..last (only `last` if !allow_loss), then the uncertain ones in order. On a match the
  // model becomes that state and "" is returned; else a description of the mismatch. The state
  // becomes the durable floor if `durable` (after a crash, what survived is on stable storage; a
  // close that failed to sync leaves the recovered commits as fragile as before).
  std::string recover(const State& actual, bool allow_loss, bool durable, uint64_t* lost) {
    const uint64_t from = allow_loss ? floor_ : last_;
    const size_t certain = static_cast<size_t>(last_ - from);
    std::vector<uint64_t> hash(certain + pending_.size() + 1, 0);  // hash[i]: after from + i
    for (const auto& [key, vs] : keys_) {
      const Version* base = at(vs, from);
      Value old = base == nullptr ? nullptr : base->value;
      hash[0] += entry_hash(key, old);
      for (const Version& v : vs) {
        if (v.commit <= from) continue;
        size_t i = static_cast<size_t>(v.commit - from);
        hash[i] += entry_hash(key, v.value) - entry_hash(key, old);
        old = v.value;
      }
    }
    WriteSet overlay;  // pending writes applied so far, over the state at last_
    for (size_t p = 0; p < pending_.size(); ++p) {
      for (const auto& [k, v] : pending_[p]) {
        auto o = overlay.find(k);
        Value old = o != overlay.end() ? o->second : get(k, last_, nullptr);
        hash[certain + 1 + p] += entry_hash(k, v) - entry_hash(k, old);
        overlay[k] = v;
      }
    }
    for (size_t i = 1; i < hash.size(); ++i) hash[i] += hash[i - 1];
    uint64_t target = 0;
    for (const auto& [k, v] : actual) target += entry_hash(k, &v);

    for (size_t i = hash.size(); i-- > 0;) {
      if (hash[i] != target) continue;
      if (!first_difference(actual, state_at(from, i)).empty()) continue;  // a hash collision
      if (i <= certain) {
        *lost = certain - i;
        truncate(from + i);
      } else {
        *lost = 0;
        std::vector<WriteSet> survived(pending_.begin(),
                                       pending_.begin() + static_cast<long>(i - certain));
        for (const WriteSet& w : survived) apply(w);
      }
      pending_.clear();
      if (durable) floor_ = last_;
      return "";
    }
    std::string msg = "recovered state (" + std::to_string(actual.size()) +
                      " keys) is not the state after any prefix of the commit order: commits " +
                      std::to_string(from) + ".." + std::to_string(last_);
    if (!pending_.empty()) msg += " (+" + std::to_string(pending_.size()) + " uncertain)";
    msg += " could survive; against commit " + std::to_string(from) + ": " +
           first_difference(actual, state_at(from, 0));
    if (hash.size() > 1) {
      msg += "; against the newest: " + first_difference(actual, state_at(from, hash.size() - 1));
    }
    return msg;
  }

 private:
  struct Version {
    uint64_t commit;
    Value value;  // null: deleted
  };

  // The newest version visible at `snap`, or null.
  static const Version* at(const std::vector<Version>& vs, uint64_t snap) {
    for (size_t i = vs.size(); i-- > 0;) {
      if (vs[i].commit <= snap) return &vs[i];
    }
    return nullptr;
  }

  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  static uint64_t fnv(std::string_view s, uint64_t h) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return h;
  }
  // An order-independent digest of a state is the sum of its entries' hashes; absent is 0.
  static uint64_t entry_hash(std::string_view key, const std::string* v) {
    if (v == nullptr) return 0;
    return mix(fnv(key, 0xcbf29ce484222325ull) ^ mix(fnv(*v, 0x84222325cbf29ce4ull) + v->size()));
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
      for (const auto& [k, v] : pending_[p]) overlay[k] = v;
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
  }

  std::map<std::string, std::vector<Version>, std::less<>> keys_;
  uint64_t last_ = 0;
  uint64_t floor_ = 0;
  std::vector<WriteSet> pending_;
};

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_MODEL_H_
