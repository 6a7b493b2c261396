// What a benchmark run measured, and its two renderings: a Markdown report (throughput, latency
// and memory tables) and JSON with every figure.
//
// Thread safety: plain values and pure functions.

#ifndef SKV_TOOLS_BENCH_REPORT_H_
#define SKV_TOOLS_BENCH_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workload.h"

namespace skv::bench {

struct RunConfig {
  std::string workload = "crud";  // "crud" or "large" (see workload_phases.h)
  uint64_t n = 200000;            // rows of the single-row phases
  int clients = 64;               // client threads
  int rounds = 1;                 // runs of every engine, interleaved; phases report the median
  bool sync = false;              // durable commits
  size_t cache_bytes = 64 << 20;  // block cache of skv, RocksDB and LevelDB
  uint64_t batch_rows = 0;        // rows per batch phase (0: n)
  uint64_t scan_repeats = 2000;   // runs of each 100-row scan
  uint64_t count_repeats = 10;    // runs of the full count (crud) or of the full scan (large)
  size_t value_size = 8192;       // bytes of every value (large)
  size_t value_threshold = 1024;  // smallest value for the value log and blob files
  double settle_seconds = 2;      // pause before the resting memory is read
  bool settle_phases = true;      // wait for background work after each phase
  std::string dir = "/tmp/skv-bench";
  std::vector<std::string> engines = {"skv", "rocksdb", "lmdb", "leveldb", "sqlite"};
  bool fork = true;           // one child process per engine
  bool keep = false;          // keep each engine's directory
  std::string profile_phase;  // phase to turn a perf recording on for (see main.cpp)
};

// One engine's run. Memory is resident set size (bytes) of the process that ran it.
struct EngineRun {
  std::string key;         // as given to --engines ("rocksdb")
  std::string name;        // display name ("RocksDB")
  std::string durability;  // what --sync means for it
  std::string error;       // empty if the run completed
  std::string counters;    // Engine::counters() at the end of the run
  std::vector<PhaseResult> phases;
  // With several rounds: each phase's ops/s in every round (phases hold the median round's).
  std::map<std::string, std::vector<double>> round_rates;
  uint64_t rss_open = 0;     // right after opening the database
  uint64_t rss_rest = 0;     // after the last phase and the settle pause, database still open
  uint64_t rss_trimmed = 0;  // the same after malloc_trim(0) gave free heap back to the OS
  uint64_t rss_peak = 0;     // VmHWM over the whole run
  uint64_t disk_rest = 0;    // the database directory after the settle pause, still open
};

struct Machine {
  int cpus = 0;
  std::string cpu_model;
  std::string kernel;
  uint64_t memory_bytes = 0;
  // With --sync on: fdatasync() calls per second of 4 KiB writes in --dir, measured before the
  // run (0: not measured).
  double fdatasync_per_second = 0;
};

Machine describe_machine();

// One engine's rounds merged: each phase is the round with the median ops/s, the memory figures
// are medians, and an error in any round is kept. REQUIRES: !rounds.empty().
EngineRun combine_rounds(const std::vector<EngineRun>& rounds);

// The ids of every phase of a workload ("crud", "large"), in the order they run, and their
// display names.
const std::vector<std::string>& phase_ids(const std::string& workload);
std::string phase_title(const std::string& id);

std::string render_markdown(const RunConfig& config, const Machine& machine,
                            const std::vector<EngineRun>& runs);
std::string render_json(const RunConfig& config, const Machine& machine,
                        const std::vector<EngineRun>& runs);

}  // namespace skv::bench

#endif  // SKV_TOOLS_BENCH_REPORT_H_
