// The crud-bench style workload: its keys, its values, its phases, and the runner that drives one
// phase from many client threads and measures it.
//
// Thread safety: the free functions are pure; a Rng belongs to one thread; run_phase() starts and
// joins its own threads.

#ifndef SKV_TOOLS_BENCH_WORKLOAD_H_
#define SKV_TOOLS_BENCH_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace skv::bench {

// The "string26" key of operation `index`: the lower-case hex (16 characters) of XXH64, seed 0,
// over the index as 4 big-endian bytes, then the index in decimal padded to 10 digits. Keys in
// index order are therefore in random key order.
std::string make_key(uint32_t index);
constexpr size_t kKeySize = 26;

// splitmix64: small, fast, and good enough to make values and lengths.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }

 private:
  uint64_t state_;
};

constexpr size_t kMinValueSize = 674;
constexpr size_t kMaxValueSize = 1011;

// A fresh random record of kMinValueSize..kMaxValueSize bytes (about 840 on average): a small
// JSON-like document whose text fields are random alphanumerics, so it compresses about as
// much as real records do (a little), written into `out`.
void make_value(Rng& rng, uint32_t index, std::string& out);
// The same kind of record, of exactly `size` bytes. REQUIRES: size >= 160.
void make_value_of_size(Rng& rng, uint32_t index, size_t size, std::string& out);

// What one measured phase did.
struct PhaseResult {
  std::string id;       // stable identifier: "create", "batch_read_100", "scan_skip_keys", ...
  uint64_t ops = 0;     // transactions (or scans) completed
  uint64_t rows = 0;    // rows written, read or visited by them
  uint64_t misses = 0;  // reads that found nothing, scans that came back short
  double seconds = 0;   // wall time from the start of the first op to the end of the last
  uint64_t p50_ns = 0;  // latency of one op
  uint64_t p99_ns = 0;
  uint64_t max_ns = 0;
  uint64_t rss_after = 0;   // resident bytes right after the phase
  uint64_t disk_after = 0;  // bytes the engine's directory holds right after the phase
  // Sum of the sizes of the files under the engine's directory right after the phase.
  uint64_t files_after = 0;
  // User data the phase wrote: bytes of keys and values put, of keys deleted (0 where not
  // counted: the crud workload's phases).
  uint64_t user_bytes = 0;
  // Bytes the process caused to be written to storage during the phase (/proc/self/io
  // write_bytes): the engine's foreground and background threads alike.
  uint64_t disk_written = 0;
  // The same two, from the opening of the database to the end of this phase.
  uint64_t user_bytes_total = 0;
  uint64_t disk_written_total = 0;
  // Commits the engine acknowledged during the phase and the WAL syncs that carried them, for
  // engines that count them (Engine::commit_totals); both 0 otherwise.
  uint64_t commits = 0;
  uint64_t wal_syncs = 0;
  // Seconds the harness then waited for the engine's background work (--settle-phases): not
  // part of `seconds`; the phase's disk figures are taken after it.
  double settle_seconds = 0;
};

// One op of a phase: runs operation `index` on client `worker` and returns its latency in
// nanoseconds (timing only the engine call, not the making of keys and values). Adds to `rows`
// and `misses`.
using OpFn =
    std::function<uint64_t(int worker, uint64_t index, Rng& rng, uint64_t& rows, uint64_t& misses)>;

// Runs operations 0 .. ops-1 from `clients` threads, each pulling the next index from a shared
// counter, and measures them. Exceptions from `op` stop the phase and are rethrown here.
PhaseResult run_phase(const std::string& id, uint64_t ops, int clients, uint64_t seed,
                      const OpFn& op);

// Nanoseconds on the monotonic clock.
uint64_t now_ns();

}  // namespace skv::bench

#endif  // SKV_TOOLS_BENCH_WORKLOAD_H_
