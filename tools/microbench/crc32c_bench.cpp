// CRC32C throughput over buffers of the sizes the engine checksums (a small WAL record, a typical
// record, a 4 KiB block, a 16 KiB data block, a 64 KiB one): crc32c::value(), which uses the CPU
// instruction where there is one (three stripes at once from 768 bytes on), and
// crc32c::extend_portable(), the table path other CPUs (and wasm) take. Reports bytes per second:
// the ceiling of every checksum check.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>

#include "bench_util.h"
#include "util/crc32c.h"

namespace skv::microbench {
namespace {

void BM_Crc32c(benchmark::State& state) {
  std::mt19937_64 rng(kSeed);
  const std::string data = make_value(rng, static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint32_t crc = crc32c::value(data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size()));
}
BENCHMARK(BM_Crc32c)->ArgName("bytes")->Arg(64)->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536);

void BM_Crc32cPortable(benchmark::State& state) {
  std::mt19937_64 rng(kSeed);
  const std::string data = make_value(rng, static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    uint32_t crc = crc32c::extend_portable(0, data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size()));
}
BENCHMARK(BM_Crc32cPortable)->ArgName("bytes")->Arg(64)->Arg(4096)->Arg(16384);

}  // namespace
}  // namespace skv::microbench
