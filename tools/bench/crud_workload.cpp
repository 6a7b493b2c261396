// The crud-bench style workload (docs/benchmarks.md): single-row create, read and update, scans
// from the first key, single-row delete, then batches of 100 and of 1,000 rows.

#include <algorithm>
#include <string>
#include <vector>

#include "workload_phases.h"

namespace skv::bench {

void run_crud_workload(const RunConfig& config, Engine& e, const PhaseFn& run) {
  const uint64_t n = config.n;
  auto phase = [&](const std::string& id, uint64_t ops, const OpFn& op) { run(id, ops, 0, op); };

  // Single-row phases over operation indices 0 .. n-1.
  phase("create", n, [&](int w, uint64_t i, Rng& rng, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    thread_local std::string v;
    make_value(rng, static_cast<uint32_t>(i), v);
    const uint64_t t0 = now_ns();
    e.create(w, k, v);
    ++rows;
    return now_ns() - t0;
  });
  phase("read", n, [&](int w, uint64_t i, Rng&, uint64_t& rows, uint64_t& misses) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    const uint64_t t0 = now_ns();
    const bool found = e.read(w, k);
    const uint64_t t = now_ns() - t0;
    ++rows;
    if (!found) ++misses;
    return t;
  });
  phase("update", n, [&](int w, uint64_t i, Rng& rng, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    thread_local std::string v;
    make_value(rng, static_cast<uint32_t>(i), v);
    const uint64_t t0 = now_ns();
    e.update(w, k, v);
    ++rows;
    return now_ns() - t0;
  });

  // Scans from the first key.
  auto scan = [&](const std::string& id, uint64_t repeats, uint64_t skip, uint64_t limit,
                  bool values, uint64_t expect) {
    phase(
        id, repeats,
        [&, skip, limit, values, expect](int w, uint64_t, Rng&, uint64_t& rows, uint64_t& misses) {
          const uint64_t t0 = now_ns();
          const uint64_t got = limit == 0 ? e.count_all(w) : e.scan(w, skip, limit, values);
          const uint64_t t = now_ns() - t0;
          rows += got;
          if (got != expect) ++misses;
          return t;
        });
  };
  const uint64_t after_skip = n > 5000 ? std::min<uint64_t>(100, n - 5000) : 0;
  scan("scan_count", config.count_repeats, 0, 0, false, n);
  scan("scan_keys", config.scan_repeats, 0, 100, false, std::min<uint64_t>(100, n));
  scan("scan_pairs", config.scan_repeats, 0, 100, true, std::min<uint64_t>(100, n));
  scan("scan_skip_keys", config.scan_repeats, 5000, 100, false, after_skip);
  scan("scan_skip_pairs", config.scan_repeats, 5000, 100, true, after_skip);

  phase("delete", n, [&](int w, uint64_t i, Rng&, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    const uint64_t t0 = now_ns();
    e.remove(w, k);
    ++rows;
    return now_ns() - t0;
  });

  // Batches: batch j of size s covers indices base + j*s .. base + j*s + s-1, past the rows of
  // the single-row phases, and a different range for each batch size.
  uint64_t base = n;
  for (const uint64_t size : {uint64_t{100}, uint64_t{1000}}) {
    const uint64_t batches = std::max<uint64_t>(1, config.batch_rows / size);
    const std::string suffix = "_" + std::to_string(size);
    auto rows_of = [base, size](uint64_t j, Rng* rng, std::vector<Row>& out) {
      out.resize(size);
      for (uint64_t r = 0; r < size; ++r) {
        const uint32_t index = static_cast<uint32_t>(base + j * size + r);
        out[r].first = make_key(index);
        if (rng != nullptr) make_value(*rng, index, out[r].second);
      }
    };
    auto keys_of = [base, size](uint64_t j, std::vector<std::string>& out) {
      out.resize(size);
      for (uint64_t r = 0; r < size; ++r)
        out[r] = make_key(static_cast<uint32_t>(base + j * size + r));
    };
    auto write = [&](const std::string& id, bool update) {
      phase(id, batches, [&, update](int w, uint64_t j, Rng& rng, uint64_t& rows, uint64_t&) {
        thread_local std::vector<Row> batch;
        rows_of(j, &rng, batch);
        const uint64_t t0 = now_ns();
        if (update) {
          e.update_batch(w, batch);
        } else {
          e.create_batch(w, batch);
        }
        rows += batch.size();
        return now_ns() - t0;
      });
    };
    write("batch_create" + suffix, false);
    phase("batch_read" + suffix, batches,
          [&](int w, uint64_t j, Rng&, uint64_t& rows, uint64_t& misses) {
            thread_local std::vector<std::string> keys;
            keys_of(j, keys);
            const uint64_t t0 = now_ns();
            const size_t found = e.read_batch(w, keys);
            const uint64_t t = now_ns() - t0;
            rows += keys.size();
            misses += keys.size() - found;
            return t;
          });
    write("batch_update" + suffix, true);
    phase("batch_delete" + suffix, batches,
          [&](int w, uint64_t j, Rng&, uint64_t& rows, uint64_t&) {
            thread_local std::vector<std::string> keys;
            keys_of(j, keys);
            const uint64_t t0 = now_ns();
            e.remove_batch(w, keys);
            rows += keys.size();
            return now_ns() - t0;
          });
    base += config.batch_rows;
  }
}

}  // namespace skv::bench
