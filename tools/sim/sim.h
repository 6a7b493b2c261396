// The deterministic simulation of skv: run_simulation(config) runs one seed and says whether the
// engine ever disagreed with the model (see simulation.h for what a run does, sim_model.h for the
// rules it checks). This header holds the operation mix and the loop; include it to use the
// simulation (the skv_sim runner and tests/sim_test.cpp do).
//
// Thread safety: run_simulation may be called from several threads at once (runs share nothing).

#ifndef SKV_TOOLS_SIM_SIM_H_
#define SKV_TOOLS_SIM_SIM_H_

#include <string>

#include "tools/sim/sim_encryption.h"
#include "tools/sim/sim_lifecycle.h"
#include "tools/sim/sim_scan.h"
#include "tools/sim/sim_time_ops.h"
#include "tools/sim/sim_txn_ops.h"
#include "tools/sim/simulation.h"

namespace skv::sim {

// The command that replays one seed with every operation printed.
inline std::string replay_command(const std::string& program, uint64_t seed, uint64_t steps) {
  return program + " --first-seed " + std::to_string(seed) + " --seeds 1 --steps " +
         std::to_string(steps) + " --verbose";
}

inline SimResult run_simulation(const SimConfig& config) { return Simulation(config).run(); }

// Small trees, so a few thousand operations flush, compact and stall.
inline void Simulation::choose_options() {
  static const size_t kMemtables[] = {4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10};
  static const size_t kCaches[] = {0, 16 << 10, 1 << 20};
  Options& o = options_;
  o.memtable_size = kMemtables[rng_.uniform(5)];
  o.max_immutable_memtables = static_cast<int>(rng_.between(1, 3));
  o.block_cache_capacity = kCaches[rng_.uniform(3)];
  o.block_restart_interval = static_cast<int>(rng_.between(1, 16));
  o.block_restart_bytes = rng_.one_in(2) ? 0 : static_cast<size_t>(rng_.between(32, 2048));
  o.bloom_bits_per_key = rng_.one_in(3) ? 0 : 10;
  o.zstd_level = static_cast<int>(rng_.between(1, 3));
  o.level_count = static_cast<int>(rng_.between(3, 7));
  o.l0_compaction_trigger = static_cast<int>(rng_.between(2, 4));
  o.l0_stop_writes_trigger = o.l0_compaction_trigger + static_cast<int>(rng_.between(2, 12));
  o.level_base_bytes = rng_.between(64, 256) << 10;
  o.level_multiplier = static_cast<int>(rng_.between(2, 10));
  o.target_file_size = rng_.between(64, 128) << 10;
  o.default_durability = rng_.one_in(4) ? Durability::Immediate : Durability::Eventual;
  // Half the seeds compact in steps of 4..64 KiB of input, so crashes, faults and reads land
  // between the steps of a compaction. Drawn from the seed apart from rng_, which keeps every
  // other choice (and so each seed's scenario) as it was before this option existed.
  uint64_t h = config_.seed * 0x9e3779b97f4a7c15ull;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  o.compaction_step_bytes = (h & 1) ? ((h >> 8) % 61 + 4) << 10 : 0;
  // Half the seeds separate values into value logs (from other bits of the same hash), with
  // small files and a garbage ratio that makes background collection run often.
  o.enable_vlog = ((h >> 20) & 1) != 0;
  static const size_t kThresholds[] = {1, 64, 512, 2048};
  static const double kRatios[] = {0.2, 0.5, 1.0};
  o.vlog_value_threshold = kThresholds[(h >> 21) % 4];
  o.vlog_max_file_size = ((h >> 24) % 61 + 4) << 10;
  o.vlog_gc_ratio = kRatios[(h >> 32) % 3];
  o.vlog_cache_capacity = (h >> 40) % 2 == 0 ? 0 : 64 << 10;
  // Half the seeds compress their L0 tables too (the default leaves them uncompressed).
  o.flush_compression = (h >> 41) & 1 ? Compression::Zstd : Compression::None;
  // And L1 compressed or, as by default, raw.
  o.compression_start_level = (h >> 42) & 1 ? 1 : 2;
  note("options: vlog %s, threshold %zu, vlog file %llu, gc ratio %.1f, value cache %zu",
       o.enable_vlog ? "on" : "off", o.vlog_value_threshold,
       static_cast<unsigned long long>(o.vlog_max_file_size), o.vlog_gc_ratio,
       o.vlog_cache_capacity);
  // Half the seeds are versioned, drawn the same way. A third of those keep every version
  // (retention 0); the others keep 0.1..3 ms of the simulated clock, which advances about 1 us a
  // step, so retention drops versions within a run.
  versioned_ = (h >> 1) & 1;
  retention_ = versioned_ && (h >> 2) % 3 != 0 ? ((h >> 48) % 30 + 1) * 100'000 : 0;
  if (versioned_) {
    ++stats_.versioned_seeds;
    data_.set_max_large_value(4096);
  }
  note(
      "options: memtable %zu, imms %d, cache %zu, bloom %d, levels %d, l0 %d/%d, base %llu x%d, "
      "file %llu, step %llu, default %s, versioning %s, retention %llu",
      o.memtable_size, o.max_immutable_memtables, o.block_cache_capacity, o.bloom_bits_per_key,
      o.level_count, o.l0_compaction_trigger, o.l0_stop_writes_trigger,
      static_cast<unsigned long long>(o.level_base_bytes), o.level_multiplier,
      static_cast<unsigned long long>(o.target_file_size),
      static_cast<unsigned long long>(o.compaction_step_bytes),
      o.default_durability == Durability::Immediate ? "immediate" : "eventual",
      versioned_ ? "on" : "off", static_cast<unsigned long long>(retention_));
}

// One operation, drawn from a fixed mix (weights per 1000).
inline void Simulation::step() {
  struct Op {
    int weight;
    void (Simulation::*run)();
  };
  static const Op kOps[] = {
      {60, &Simulation::op_begin},
      {180, &Simulation::op_put},
      {50, &Simulation::op_delete},
      {25, &Simulation::op_bulk},
      {4, &Simulation::op_bad_key},
      {110, &Simulation::op_get},
      {30, &Simulation::op_count},
      {90, &Simulation::op_scan_once},
      {12, &Simulation::op_scan_held},
      {25, &Simulation::op_held_step},
      {95, &Simulation::op_commit},
      {15, &Simulation::op_rollback},
      {18, &Simulation::op_savepoint},
      {18, &Simulation::op_rollback_savepoint},
      {90, &Simulation::op_background},
      {14, &Simulation::op_flush},
      {4, &Simulation::op_compact},
      {8, &Simulation::op_reopen},
      {10, &Simulation::op_crash},
      {8, &Simulation::op_faults},  // 40 while faults are armed: fault phases stay short
      {2, &Simulation::op_busy},
      // By time: a fifth as often on unversioned seeds, where they must be refused.
      {25, &Simulation::op_set_at},
      {30, &Simulation::op_get_at},
      {20, &Simulation::op_history},
      {20, &Simulation::op_scan_at},
      {5, &Simulation::op_history_range},
      {10, &Simulation::op_clock},
  };
  auto weight = [this](const Op& op) {
    if (op.run == &Simulation::op_faults && faults_active_) return 40;
    // Each reopen reads the whole tree, which holds more on versioned seeds.
    if (op.run == &Simulation::op_reopen && versioned_) return 6;
    if (op.run == &Simulation::op_crash && versioned_) return 7;
    const bool timed = op.run == &Simulation::op_set_at || op.run == &Simulation::op_get_at ||
                       op.run == &Simulation::op_history || op.run == &Simulation::op_scan_at ||
                       op.run == &Simulation::op_history_range;
    return timed && !versioned_ ? std::max(1, op.weight / 5) : op.weight;
  };
  // Time passes: about 1 us a step (op_clock steps it back or far ahead now and then).
  memory_->fake_clock().advance(rng_.uniform(2001));
  int total = 0;
  for (const Op& op : kOps) total += weight(op);
  int r = static_cast<int>(rng_.uniform(static_cast<uint64_t>(total)));
  const Op* op = kOps;
  while (r >= weight(*op)) r -= weight(*op++);
  (this->*(op->run))();
  if (failed() || !check_no_sync_after_wal_failure("after the step")) return;
  // A write path that failed stays failed (sticky): once the faults are gone, reopen to recover.
  if (write_error_seen_ && !faults_active_) reopen(rng_.one_in(3));
  if (step_ % 64 == 0) {
    uint64_t oldest = model_.last_commit();
    for (const Txn& t : txns_) oldest = std::min(oldest, t.snap);
    model_.prune(oldest, versioned_, versioned_ ? horizon() : 0);
    const TreeStats st = tree_->stats();
    for (int l = 0; l < st.level_count; ++l) {
      if (st.files_per_level[l] > 0 && static_cast<uint64_t>(l) > stats_.deepest_level) {
        stats_.deepest_level = static_cast<uint64_t>(l);
      }
    }
    stats_.vlog_files = std::max(stats_.vlog_files, st.vlog_files);
    stats_.vlog_gc_runs = std::max(stats_.vlog_gc_runs, st.vlog_gc_runs);
  }
}

// After the last step: everything acknowledged must be there after a clean close and reopen.
inline void Simulation::final_check() {
  stop_faults();
  reopen(false);
  if (failed()) return;
  Status s = tree_->close();
  if (!s.ok()) fail("final close: " + show(s));
}

inline SimResult Simulation::run() {
  memory_ = std::make_shared<MemoryPlatform>();
  platform_ = std::make_shared<FaultPlatform>(memory_);
  note("seed %llu, %llu steps", static_cast<unsigned long long>(config_.seed),
       static_cast<unsigned long long>(config_.steps));
  choose_options();
  choose_encryption();
  // A new database: versioned as the seed says; an unversioned one sometimes says so.
  VersioningOption versioning;
  if (versioned_) {
    versioning = Versioning{true, retention_};
  } else if (rng_.one_in(2)) {
    versioning = Versioning{false, 0};
  }
  if (open_tree(versioning)) {
    for (step_ = 1; step_ <= config_.steps; ++step_) {
      step();
      if (failed()) break;
    }
    if (!failed()) final_check();
  }
  SimResult result;
  result.ok = !failed();
  result.seed = config_.seed;
  result.step = std::min(step_, config_.steps + 1);
  result.message = failure_;
  stats_.steps = std::min(step_, config_.steps);
  stats_.faults_injected = platform_->faults_injected();
  result.stats = stats_;
  held_.clear();
  txns_.clear();
  tree_.reset();
  return result;
}

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_H_
