// Engine: the operations the benchmark runs, implemented once per storage engine (skv, RocksDB,
// LMDB, LevelDB, SQLite) over that engine's own API. skv and RocksDB also come in a variant that
// keeps large values apart from the tree: skv with its value log, RocksDB with blob files.
//
// Every single-row method is one transaction of its own, reads included; every *_batch method is
// one transaction over all its rows. Failures throw BenchError: the harness runs each engine in a
// child process and reports the message instead of that engine's figures.
//
// Thread safety: after open() and before close(), any method may be called from `clients`
// threads at once; `worker` (0 .. clients-1) names the calling thread, so an engine may keep
// per-thread state (SQLite keeps one connection per worker). Not copyable.

#ifndef SKV_TOOLS_BENCH_ENGINE_H_
#define SKV_TOOLS_BENCH_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skv/encryption.h"

namespace skv::bench {

class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineConfig {
  std::string dir;                // a fresh, empty directory for this engine
  bool sync = false;              // commits reach stable storage before they complete
  size_t cache_bytes = 64 << 20;  // block cache (skv, RocksDB, LevelDB)
  int clients = 1;                // threads that will call the engine
  uint64_t expected_rows = 0;     // most rows alive at once plus headroom (sizes LMDB's map)
  size_t max_value_size = 1011;   // the largest value the workload writes (sizes LMDB's map)
  // Values of at least this many bytes go to the value log (skv-vlog) or to blob files
  // (rocksdb-blob); the other variants ignore it.
  size_t value_threshold = 1024;
};

using Row = std::pair<std::string, std::string>;

class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  virtual ~Engine() = default;

  // A display name ("RocksDB"), and what --sync on/off means for this engine, for the report.
  virtual std::string name() const = 0;
  virtual std::string durability() const = 0;

  // Counters the engine keeps about the run (group commit, flushes, ...), one line, or empty.
  virtual std::string counters() const { return ""; }
  struct CommitTotals {
    uint64_t commits = 0;    // commits acknowledged since open
    uint64_t wal_syncs = 0;  // WAL syncs since open
  };
  // For engines that count them: the totals the harness takes before and after each phase to
  // report commits per sync and syncs per second.
  virtual std::optional<CommitTotals> commit_totals() const { return std::nullopt; }
  // Tables per level, shallowest first ("2/4/12"), for engines with levels, else empty. The
  // harness prints it after each phase: the shape a phase leaves decides the next one's reads.
  virtual std::string shape() const { return ""; }

  virtual void open(const EngineConfig& config) = 0;
  virtual void close() = 0;

  virtual void create(int worker, std::string_view key, std::string_view value) = 0;
  // True if the key was found.
  virtual bool read(int worker, std::string_view key) = 0;
  virtual void update(int worker, std::string_view key, std::string_view value) = 0;
  virtual void remove(int worker, std::string_view key) = 0;

  virtual void create_batch(int worker, const std::vector<Row>& rows) = 0;
  // The number of keys found.
  virtual size_t read_batch(int worker, const std::vector<std::string>& keys) = 0;
  virtual void update_batch(int worker, const std::vector<Row>& rows) = 0;
  virtual void remove_batch(int worker, const std::vector<std::string>& keys) = 0;

  // The number of keys in the database, by visiting them.
  virtual uint64_t count_all(int worker) = 0;
  // From the first key: steps over `skip` keys, then reads up to `limit` keys (and their values
  // if `with_values`). Returns the number read after the skip.
  virtual uint64_t scan(int worker, uint64_t skip, uint64_t limit, bool with_values) = 0;

  // Whether the engine's background work (memtable flushes, compactions) is done. Between phases
  // the harness polls it from one thread while no other method runs, so that each phase's time
  // is its own and not the tail of the phase before. The default: no background work (LMDB,
  // SQLite).
  virtual bool background_idle() { return true; }

  // Gives back the space of overwritten and deleted data: a full compaction, and for the
  // variants with separated values the garbage collection of their files. Returns when done.
  // Called from one thread while no other method runs. The default does nothing (LMDB and
  // SQLite reuse freed pages in place; their files do not shrink).
  virtual void gc() {}
};

// skv; with `value_log`, values of at least EngineConfig::value_threshold bytes go to its value
// log.
std::unique_ptr<Engine> make_skv_engine(bool value_log,
                                        std::optional<CipherSuite> cipher = std::nullopt);
// RocksDB; with `blob_files`, values of at least EngineConfig::value_threshold bytes go to its
// integrated blob files, with blob garbage collection on.
std::unique_ptr<Engine> make_rocksdb_engine(bool blob_files);
std::unique_ptr<Engine> make_lmdb_engine();
std::unique_ptr<Engine> make_leveldb_engine();
std::unique_ptr<Engine> make_sqlite_engine();

}  // namespace skv::bench

#endif  // SKV_TOOLS_BENCH_ENGINE_H_
