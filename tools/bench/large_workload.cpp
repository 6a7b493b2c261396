// The large-value workload (docs/benchmarks.md): N rows of one fixed value size (8 KiB, 64 KiB,
// ...), created, overwritten twice, read, scanned in full, then a gc step (the engine's full
// compaction and garbage collection), then deleted. Every phase records what the process wrote
// to storage, for write amplification; the directory's size after the second update and after
// the gc step gives space amplification.

#include <cstdint>
#include <string>

#include "workload_phases.h"

namespace skv::bench {

void run_large_workload(const RunConfig& config, Engine& e, const PhaseFn& run) {
  const uint64_t n = config.n;
  const size_t value_size = config.value_size;
  const uint64_t row_bytes = kKeySize + value_size;

  auto put = [&](const std::string& id, bool update) {
    run(id, n, row_bytes, [&, update](int w, uint64_t i, Rng& rng, uint64_t& rows, uint64_t&) {
      const std::string k = make_key(static_cast<uint32_t>(i));
      thread_local std::string v;
      make_value_of_size(rng, static_cast<uint32_t>(i), value_size, v);
      const uint64_t t0 = now_ns();
      if (update) {
        e.update(w, k, v);
      } else {
        e.create(w, k, v);
      }
      ++rows;
      return now_ns() - t0;
    });
  };
  put("create", false);
  put("update1", true);
  put("update2", true);

  run("read", n, 0, [&](int w, uint64_t i, Rng&, uint64_t& rows, uint64_t& misses) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    const uint64_t t0 = now_ns();
    const bool found = e.read(w, k);
    const uint64_t t = now_ns() - t0;
    ++rows;
    if (!found) ++misses;
    return t;
  });
  // Full scans of every key and value, --count-repeats of them spread over the clients.
  run("scan", config.count_repeats, 0,
      [&](int w, uint64_t, Rng&, uint64_t& rows, uint64_t& misses) {
        const uint64_t t0 = now_ns();
        const uint64_t got = e.scan(w, 0, UINT64_MAX, true);
        const uint64_t t = now_ns() - t0;
        rows += got;
        if (got != n) ++misses;
        return t;
      });
  run("gc", 1, 0, [&](int, uint64_t, Rng&, uint64_t&, uint64_t&) {
    const uint64_t t0 = now_ns();
    e.gc();
    return now_ns() - t0;
  });
  run("delete", n, kKeySize, [&](int w, uint64_t i, Rng&, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    const uint64_t t0 = now_ns();
    e.remove(w, k);
    ++rows;
    return now_ns() - t0;
  });
}

}  // namespace skv::bench
