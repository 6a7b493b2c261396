// Helpers shared by the micro-benchmarks: deterministic keys and values, a fail-fast check for
// errors during setup, scratch directories for the benchmarks that use the POSIX platform, and the
// loop of the counting benchmarks.
//
// Keys are 26 bytes, shaped like crud-bench's "string26" (16 hex digits of a hash of the index,
// then the index zero-padded to 10 digits), so they are spread uniformly and never repeat.
// Values are random alphanumeric bytes: zstd saves roughly a fifth on them, so SSTable blocks
// are stored compressed (the default) and an uncached read pays for decompression.
//
// Thread safety: the functions keep no shared state; BenchDir is used by one thread.

#ifndef SKV_TOOLS_MICROBENCH_BENCH_UTIL_H_
#define SKV_TOOLS_MICROBENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "skv/skv.h"
#include "skv/status.h"

namespace skv::microbench {

constexpr uint64_t kSeed = 0x5eed;
constexpr size_t kKeySize = 26;

// A bijective 64-bit mix (splitmix64's finalizer): distinct indices give distinct hashes.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The key of operation `index`: 16 lower-case hex digits of mix64(index), then the index
// zero-padded to 10 digits.
inline std::string make_key(uint64_t index) {
  char buf[kKeySize + 1];
  std::snprintf(buf, sizeof(buf), "%016llx%010llu", static_cast<unsigned long long>(mix64(index)),
                static_cast<unsigned long long>(index % 10000000000ull));
  return std::string(buf, kKeySize);
}

// Keys for indices [first, first + n), in index order (which is a random key order).
inline std::vector<std::string> make_keys(uint64_t first, size_t n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (size_t i = 0; i < n; ++i) keys.push_back(make_key(first + i));
  return keys;
}

inline std::vector<std::string> sorted(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

// `size` random alphanumeric bytes.
inline std::string make_value(std::mt19937_64& rng, size_t size) {
  static constexpr std::string_view kAlphabet =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  std::string v(size, '\0');
  for (char& c : v) c = kAlphabet[pick(rng)];
  return v;
}

// A random permutation of [0, n): the order in which lookups visit the keys.
inline std::vector<uint32_t> shuffled_indices(size_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

// Setup failures make every later number meaningless: report and stop.
inline void check_ok(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "skv_microbench: %s: %s\n", what, s.to_string().c_str());
  std::abort();
}

template <typename T>
T value_or_die(Result<T> r, const char* what) {
  check_ok(r.status(), what);
  return std::move(r).value();
}

// A fresh directory under $SKV_MICROBENCH_DIR (default: the system temporary directory), removed
// with everything in it when the object is destroyed. Its file system decides what fdatasync()
// costs, so point the variable at the disk you care about.
class BenchDir {
 public:
  explicit BenchDir(std::string_view name) {
    const char* root = std::getenv("SKV_MICROBENCH_DIR");
    std::filesystem::path base = root != nullptr && *root != '\0'
                                     ? std::filesystem::path(root)
                                     : std::filesystem::temp_directory_path();
    std::random_device rd;
    path_ = (base / ("skv-microbench-" + std::string(name) + "-" + std::to_string(rd()))).string();
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  BenchDir(const BenchDir&) = delete;
  BenchDir& operator=(const BenchDir&) = delete;
  ~BenchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The body of a counting benchmark: each iteration counts every key of `tree` in a read-only
// transaction, which must find `rows`. Reports rows per second.
inline void count_every_row(benchmark::State& state, Tree& tree, uint64_t rows) {
  for (auto _ : state) {
    Transaction tx = value_or_die(tree.begin_with_mode(Mode::ReadOnly), "begin");
    const uint64_t n = value_or_die(tx.count("", ""), "count");
    if (n != rows) {
      state.SkipWithError("the count is not the number of rows loaded");
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rows));
}

}  // namespace skv::microbench

#endif  // SKV_TOOLS_MICROBENCH_BENCH_UTIL_H_
