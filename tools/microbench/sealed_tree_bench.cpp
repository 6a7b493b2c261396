// What sealing every file costs a whole tree (docs/encryption.md, docs/benchmarks.md "Encryption
// at rest"): point reads and single-row writes through the public API, on the POSIX platform,
// plaintext beside XChaCha20-Poly1305 and AES-256-GCM (where the CPU has AES-NI).
//
// One client thread, so the figure is the cost of an operation rather than of scheduling 64
// clients on two cores. Run with repetitions and random interleaving, so that the three trees
// take turns through the run and drift in the machine's load falls on all of them:
//
//   skv_microbench --benchmark_filter=SealedTree --benchmark_repetitions=9
//     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//
// BM_SealedTreeGet reads 100,000 rows of 400-byte values (about 42 MiB of tables, zstd) in a
// random order through a block cache of 4 MiB (most reads miss the cache and open, check and
// decompress a block: the case sealing costs most) or 32 MiB (most reads hit decoded blocks).
// BM_SealedTreePut commits one new row per transaction with Durability::Eventual; flushes and
// compactions (which seal whole tables) run on the tree's background threads, so it uses real time.

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "skv/skv.h"

namespace skv::microbench {
namespace {

constexpr size_t kRows = 100000;
constexpr size_t kValueBytes = 400;

std::optional<CipherSuite> suite_of(int64_t arg) {
  if (arg == 1) return CipherSuite::XChaCha20Poly1305;
  if (arg == 2) return CipherSuite::Aes256Gcm;
  return std::nullopt;
}

Tree open_tree(const std::string& path, std::optional<CipherSuite> suite, size_t cache_bytes) {
  TreeBuilder b;
  b.with_path(path)
      .with_block_cache_capacity(cache_bytes)
      .with_default_durability(Durability::Eventual);
  if (suite) {
    // A fixed key: this measures sealing, not key management.
    b.with_encryption(
        value_or_die(SoftwareKeyManager::from_bytes(std::string(kRootKeySize, 'k')), "key manager"),
        *suite);
  }
  return value_or_die(b.build(), "open tree");
}

// Values half random and half repeated, so zstd halves them (skv_bench's values save about a
// quarter, by entropy coding alone, in the tables compactions write; flushes store L0 tables
// uncompressed).
std::string row_value(std::mt19937_64& rng) {
  std::string v = make_value(rng, kValueBytes / 2);
  v.append(kValueBytes / 2, 'v');
  return v;
}

// One loaded tree per cipher and cache size, built on first use and kept for the whole run (the
// directories are removed at exit).
struct Loaded {
  std::unique_ptr<BenchDir> dir;
  std::optional<Tree> tree;
};

Loaded& loaded(int64_t cipher, int64_t cache_mib) {
  static std::map<std::pair<int64_t, int64_t>, Loaded> trees;
  Loaded& l = trees[{cipher, cache_mib}];
  if (l.tree) return l;
  l.dir = std::make_unique<BenchDir>("sealed-get");
  l.tree.emplace(open_tree(l.dir->path(), suite_of(cipher), static_cast<size_t>(cache_mib) << 20));
  std::mt19937_64 rng(kSeed);
  for (size_t first = 0; first < kRows; first += 1000) {
    Transaction tx = value_or_die(l.tree->begin(), "begin");
    for (size_t i = first; i < first + 1000; ++i)
      check_ok(tx.set(make_key(i), row_value(rng)), "set");
    check_ok(tx.commit().wait(), "commit");
  }
  check_ok(l.tree->compact_all(), "compact");
  return l;
}

bool usable(benchmark::State& state) {
  const std::optional<CipherSuite> s = suite_of(state.range(0));
  if (s && !cipher_available(*s)) {
    state.SkipWithError("cipher not available here");
    return false;
  }
  return true;
}

void BM_SealedTreeGet(benchmark::State& state) {
  if (!usable(state)) return;
  Tree& tree = *loaded(state.range(0), state.range(1)).tree;
  const std::vector<uint32_t> order = shuffled_indices(kRows, kSeed + 1);
  size_t next = 0;
  std::string value;
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin_with_mode(Mode::ReadOnly), "begin");
    Result<std::optional<std::string>> got = tx.get(make_key(order[next]));
    if (!got.ok() || !got->has_value()) {
      state.SkipWithError("a loaded row is missing");
      return;
    }
    benchmark::DoNotOptimize(got->value().data());
    if (++next == order.size()) next = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_SealedTreeGet)->ArgNames({"cipher", "cache_mib"})->ArgsProduct({{0, 1, 2}, {4, 32}});

void BM_SealedTreePut(benchmark::State& state) {
  if (!usable(state)) return;
  BenchDir dir("sealed-put");
  Tree tree = open_tree(dir.path(), suite_of(state.range(0)), size_t{64} << 20);
  std::mt19937_64 rng(kSeed + 2);
  const std::string value = row_value(rng);
  uint64_t i = 0;
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin_with_mode(Mode::WriteOnly), "begin");
    check_ok(tx.set(make_key(i++), value), "set");
    check_ok(tx.commit().wait(), "commit");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  check_ok(tree.close(), "close");
}
BENCHMARK(BM_SealedTreePut)->ArgName("cipher")->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

}  // namespace
}  // namespace skv::microbench
