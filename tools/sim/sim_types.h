// The simulation's vocabulary: what one run is asked to do (SimConfig), what it counted
// (SimStats), how it ended (SimResult), its random source (Rng) and how keys and values are shown
// in messages (printable).
//
// Thread safety: plain values; an Rng is used by one thread.

#ifndef SKV_TOOLS_SIM_SIM_TYPES_H_
#define SKV_TOOLS_SIM_SIM_TYPES_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace skv::sim {

// One seeded run: `steps` operations against one MemoryPlatform.
struct SimConfig {
  uint64_t seed = 1;
  uint64_t steps = 1000;
  bool verbose = false;      // print every operation to `log`
  std::FILE* log = nullptr;  // stdout when null
};

// What a run did, for the summary line. Plain counters, summed over seeds by the runner.
struct SimStats {
  uint64_t steps = 0;
  uint64_t commits = 0;        // acknowledged OK with writes
  uint64_t conflicts = 0;      // refused with Code::Conflict, as the model predicted
  uint64_t commit_errors = 0;  // failed with an injected I/O or quota error
  uint64_t reads = 0;          // gets and counts
  uint64_t scans = 0;          // iterators driven (held ones included)
  uint64_t flushes = 0;
  uint64_t compactions = 0;
  uint64_t reopens = 0;       // clean close + open
  uint64_t crashes = 0;       // crash + open
  uint64_t lost_commits = 0;  // Eventual commits a crash took (allowed)
  uint64_t fault_phases = 0;
  uint64_t faults_injected = 0;
  uint64_t read_errors = 0;    // reads that failed under injected read faults
  uint64_t deepest_level = 0;  // deepest level that held a table (a maximum, not a sum)
  uint64_t vlog_files = 0;     // most value log files one tree held (a maximum)
  uint64_t vlog_gc_runs = 0;   // most value log collections one open tree ran (a maximum)
  uint64_t versioned_seeds = 0;
  uint64_t timed_writes = 0;      // set_at calls
  uint64_t timed_reads = 0;       // get_at and history calls
  uint64_t timed_scans = 0;       // range_at, keys_at and history_range iterators
  uint64_t clock_steps_back = 0;  // the clock set back
  uint64_t ts_probes = 0;         // commit timestamps pinned down after a lossy reopen
  uint64_t refused_opens = 0;     // opens with a contradicting with_versioning
  uint64_t encrypted_seeds = 0;
  uint64_t key_rotations = 0;            // a new active key, the old ones kept decrypt-only
  uint64_t refused_encrypted_opens = 0;  // opens without a key manager or with a wrong key

  void add(const SimStats& o) {
    steps += o.steps;
    commits += o.commits;
    conflicts += o.conflicts;
    commit_errors += o.commit_errors;
    reads += o.reads;
    scans += o.scans;
    flushes += o.flushes;
    compactions += o.compactions;
    reopens += o.reopens;
    crashes += o.crashes;
    lost_commits += o.lost_commits;
    fault_phases += o.fault_phases;
    faults_injected += o.faults_injected;
    read_errors += o.read_errors;
    if (o.deepest_level > deepest_level) deepest_level = o.deepest_level;
    if (o.vlog_files > vlog_files) vlog_files = o.vlog_files;
    if (o.vlog_gc_runs > vlog_gc_runs) vlog_gc_runs = o.vlog_gc_runs;
    versioned_seeds += o.versioned_seeds;
    timed_writes += o.timed_writes;
    timed_reads += o.timed_reads;
    timed_scans += o.timed_scans;
    clock_steps_back += o.clock_steps_back;
    ts_probes += o.ts_probes;
    refused_opens += o.refused_opens;
    encrypted_seeds += o.encrypted_seeds;
    key_rotations += o.key_rotations;
    refused_encrypted_opens += o.refused_encrypted_opens;
  }
};

// How a run ended. On failure `step` is the operation that diverged (1-based) and `message` says
// what the engine did and what the model expected.
struct SimResult {
  bool ok = true;
  uint64_t seed = 0;
  uint64_t step = 0;
  std::string message;
  SimStats stats;
};

// splitmix64: small, fast, and the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t uniform(uint64_t n) { return next() % n; }
  // Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + uniform(hi - lo + 1); }
  bool one_in(uint64_t n) { return uniform(n) == 0; }
  // True with probability percent/100.
  bool percent(uint64_t p) { return uniform(100) < p; }

 private:
  uint64_t state_;
};

// `bytes` as a readable, bounded string: printable ASCII as is, other bytes as \xNN, and long
// strings cut to their first bytes plus their length.
inline std::string printable(std::string_view bytes, size_t max_shown = 24) {
  std::string out = "'";
  for (size_t i = 0; i < bytes.size() && i < max_shown; ++i) {
    auto u = static_cast<unsigned char>(bytes[i]);
    if (u >= 0x20 && u < 0x7f && u != '\\' && u != '\'') {
      out.push_back(static_cast<char>(u));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  out += "'";
  if (bytes.size() > max_shown) out += "...(" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_TYPES_H_
