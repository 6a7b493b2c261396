// Simulation: one seeded run of skv beside its Model. A generator picks operations — transactions
// of every mode, reads, scans, commits, savepoints, reads and writes by time (on versioned
// seeds; refused on the others), flushes, compactions, background steps, clean reopens, crashes,
// clock steps, injected I/O errors and quotas — runs each on the engine through the public API
// only (on a MemoryPlatform whose QueueExecutor runs background work only when the
// generator says so, behind a FaultPlatform that injects the I/O errors), checks the engine's
// answer against the model, and stops at the first divergence. The same seed always makes the
// same run.
//
// The member functions live in sim_lifecycle.h (opening, closing, crashing, faults),
// sim_encryption.h (encrypted seeds: refused opens, key rotation), sim_txn_ops.h (transactions),
// sim_scan.h (iterators) and sim_time_ops.h (the clock, versioned reads and writes); sim.h
// includes them all and drives the loop.
//
// Time: the memory platform's fake clock advances a little every step and sometimes steps back.
// Every commit reads it once (each reading advances it by one), so the model predicts each
// commit timestamp exactly: max(the reading, the previous commit timestamp + 1). After a crash
// the previous one is known only to lie between the last surviving commit's and the last one
// given out; the first commit after such a reopen checks that and makes it exact again.
//
// Thread safety: a Simulation is used by one thread. Simulations share nothing, so several may
// run at once on different threads.

#ifndef SKV_TOOLS_SIM_SIMULATION_H_
#define SKV_TOOLS_SIM_SIMULATION_H_

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "platform/fault/fault_platform.h"
#include "platform/memory/memory_platform.h"
#include "skv/skv.h"
#include "tools/sim/sim_data.h"
#include "tools/sim/sim_model.h"
#include "tools/sim/sim_types.h"

namespace skv::sim {

class Simulation {
 public:
  explicit Simulation(const SimConfig& config)
      : config_(config), rng_(config.seed * 0x2545f4914f6cdd1dull + 1), data_(&rng_) {}
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs config.steps operations (then a final clean reopen and full comparison).
  SimResult run();

 private:
  static constexpr size_t kMaxTxns = 6;
  static constexpr size_t kMaxHeld = 3;
  static constexpr const char* kPath = "sim";

  struct Txn {
    int id = 0;
    Transaction tx;
    Mode mode = Mode::ReadWrite;
    uint64_t snap = 0;  // model commit the snapshot sees
    WriteSet writes;
    std::vector<WriteSet> savepoints;
  };
  // An iterator under test with the entries it must show, and where it should be (-1: invalid).
  struct Cursor {
    Iterator it;
    std::vector<Expected> expected;
    bool keys_only = false;
    long pos = -1;
    std::string label;
  };
  // A versioning option for one open: none, or with_versioning(enabled, retention).
  using VersioningOption = std::optional<Versioning>;

  // --- the loop (sim.h)
  void choose_options();
  void step();
  void final_check();

  // --- lifecycle (sim_lifecycle.h)
  TreeBuilder builder(const VersioningOption& versioning = std::nullopt);
  bool open_tree(const VersioningOption& versioning = std::nullopt);
  VersioningOption draw_versioning_option();
  bool refused_open();
  // Every file of the database: name, size, synced size, whether its name is durable, and a hash
  // of its bytes. Refused opens must leave it as it was.
  std::string file_digest();
  void reopen(bool crash);
  void op_reopen() { reopen(false); }
  void op_crash() { reopen(true); }
  bool verify_recovered(bool allow_loss, bool durable);
  void op_faults();
  void start_faults();
  void stop_faults();
  bool flush_once(const char* what);
  void op_flush();
  void op_compact();
  void op_background();
  void op_busy();

  // --- encryption (sim_encryption.h)
  std::string root_key_bytes(uint32_t key_id, bool wrong) const;
  void choose_encryption();
  bool encryption_before_open();
  bool refused_encrypted_open();

  // --- transactions (sim_txn_ops.h)
  Txn* pick_txn(bool for_write = false);
  void op_begin();
  void op_set(bool del);
  void op_put() { op_set(false); }
  void op_delete() { op_set(true); }
  void op_bulk();
  void op_bad_key();
  void op_get();
  void op_count();
  void op_commit();
  void op_rollback();
  void op_savepoint();
  void op_rollback_savepoint();
  void check_finished(Txn& t);
  void erase_txn(const Txn& t);

  // --- time (sim_time_ops.h)
  uint64_t clock_now() { return memory_->fake_clock().peek_nanos(); }
  uint64_t horizon();
  void set_retention(uint64_t retention);
  void op_clock();
  uint64_t pick_time(const std::string& key, uint64_t snap);
  void op_set_at();
  void op_get_at();
  void op_history();
  void op_history_range();
  bool check_versions(const std::string& what, const std::string& key,
                      const std::vector<Expected>& got, uint64_t snap, bool tombstones,
                      size_t limit);
  bool probe_commit_timestamp();

  // --- iterators (sim_scan.h)
  void pick_range(std::string* start, std::string* end);
  void op_scan(bool hold, bool timed = false);
  void op_scan_at() { op_scan(rng_.one_in(8), true); }
  void op_scan_once() { op_scan(false); }
  void op_scan_held() { op_scan(true); }
  void op_held_step();
  bool drive(Cursor& c, bool seek_first_segment);
  bool apply_move(Cursor& c, int move, const std::string& target, bool read_value);
  bool check_cursor(Cursor& c, const std::string& what, bool read_value);

  // --- verdicts
  bool fail(const std::string& what) {
    if (failure_.empty()) failure_ = what;
    return false;
  }
  bool failed() const { return !failure_.empty(); }
  // A read may fail only while Read or Open faults are armed, and only with Code::IO.
  bool read_error_ok(const Status& s) const { return read_faults_ && s.code() == Code::IO; }
  // A write-path call may fail with I/O or quota once faults were armed in this tree's life.
  bool write_error_ok(const Status& s) {
    if (!armed_life_ || (s.code() != Code::IO && s.code() != Code::Quota)) return false;
    write_error_seen_ = true;
    return true;
  }
  [[gnu::format(printf, 2, 3)]] void note(const char* fmt, ...) {
    if (!config_.verbose) return;
    std::FILE* out = config_.log != nullptr ? config_.log : stdout;
    std::fprintf(out, "[%llu] ", static_cast<unsigned long long>(step_));
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(out, fmt, ap);
    va_end(ap);
    std::fputc('\n', out);
  }
  static std::string show(const Status& s) { return s.to_string(); }
  static std::string show(const Value& v) { return v ? printable(*v) : std::string("(none)"); }

  SimConfig config_;
  Rng rng_;
  DataGen data_;
  Model model_;
  SimStats stats_;
  std::shared_ptr<MemoryPlatform> memory_;   // the files: crash(), quotas, background work
  std::shared_ptr<FaultPlatform> platform_;  // memory_ wrapped; the tree opens through it
  std::optional<Tree> tree_;
  Options options_;  // this seed's tree shape
  std::vector<Txn> txns_;
  std::vector<Cursor> held_;
  int next_txn_id_ = 1;
  uint64_t step_ = 0;
  std::string failure_;

  // Versioning: chosen per seed; the retention is what the database stores now.
  bool versioned_ = false;
  uint64_t retention_ = 0;

  // Encryption: chosen per seed. keys_ holds keys 1..active_key_, the last one active.
  bool encrypted_ = false;
  std::shared_ptr<SoftwareKeyManager> keys_;
  uint32_t active_key_ = 0;
  CipherSuite cipher_ = CipherSuite::XChaCha20Poly1305;
  uint64_t max_clock_ = 0;      // the clock's largest value seen so far (readings are below it)
  uint64_t horizon_floor_ = 0;  // the horizon under earlier retentions
  // Commit timestamps: the last one given out, and the least the engine may now take as the
  // previous one (below ts_last_ only after a reopen that may have lost commits).
  uint64_t ts_last_ = 0;
  uint64_t ts_floor_ = 0;

  bool faults_active_ = false;     // a fault policy or quota is set now
  bool read_faults_ = false;       // ... and it can fail reads
  bool armed_life_ = false;        // faults were armed at some point since this tree opened
  bool write_error_seen_ = false;  // a write-path call failed since this tree opened
  // A commit failed in the write-ahead log since this tree opened. From then on nothing may sync
  // (the failed sync is never retried, close does not sync the WAL): the platform's sync count
  // must stay at what it was, and close must report the failure.
  bool wal_failed_ = false;
  uint64_t syncs_at_wal_failure_ = 0;
  bool check_no_sync_after_wal_failure(const char* when) {
    if (!wal_failed_) return true;
    const uint64_t now = platform_->call_count(FaultOp::Sync);
    if (now == syncs_at_wal_failure_) return true;
    return fail(std::string(when) + ": " + std::to_string(now - syncs_at_wal_failure_) +
                " sync(s) ran after a commit failed in the write-ahead log");
  }
};

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIMULATION_H_
