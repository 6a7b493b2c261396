// Sealing and opening one unit (docs/encryption.md): FileCipher::seal and FileCipher::open of a
// 4 KiB and a 64 KiB block with each cipher (AES-256-GCM only where the CPU has AES-NI). Reports
// bytes per second; set beside BM_Crc32c and the table benchmarks, it says what encryption adds
// to a block written or read.

#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "bench_util.h"
#include "crypto/file_cipher.h"

namespace skv::microbench {
namespace {

std::shared_ptr<const crypto::FileCipher> make_cipher(CipherSuite suite) {
  crypto::Envelope e;
  e.suite = suite;
  e.key_id = 1;
  e.salt.fill(7);
  e.db_id.fill(9);
  SecretKey root;
  const std::string bytes(kRootKeySize, 'r');
  root.assign(reinterpret_cast<const uint8_t*>(bytes.data()));
  auto c = crypto::FileCipher::create(e, FileKind::Table, 12, root, "bench");
  return c.ok() ? *c : nullptr;
}

void BM_Seal(benchmark::State& state, CipherSuite suite) {
  auto cipher = make_cipher(suite);
  if (cipher == nullptr) {
    state.SkipWithError("cipher not available on this CPU");
    return;
  }
  std::mt19937_64 rng(kSeed);
  const std::string block = make_value(rng, static_cast<size_t>(state.range(0)));
  std::string out;
  uint64_t position = 0;
  for (auto _ : state) {
    out.clear();
    cipher->seal(position, block, &out);
    position += block.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(block.size()));
}

void BM_Open(benchmark::State& state, CipherSuite suite) {
  auto cipher = make_cipher(suite);
  if (cipher == nullptr) {
    state.SkipWithError("cipher not available on this CPU");
    return;
  }
  std::mt19937_64 rng(kSeed);
  const std::string block = make_value(rng, static_cast<size_t>(state.range(0)));
  std::string sealed, out;
  cipher->seal(4096, block, &sealed);
  for (auto _ : state) {
    if (!cipher->open(4096, sealed, &out).ok()) state.SkipWithError("open failed");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(block.size()));
}

BENCHMARK_CAPTURE(BM_Seal, xchacha20_poly1305, CipherSuite::XChaCha20Poly1305)
    ->ArgName("bytes")
    ->Arg(512)
    ->Arg(4096)
    ->Arg(64 * 1024);
BENCHMARK_CAPTURE(BM_Open, xchacha20_poly1305, CipherSuite::XChaCha20Poly1305)
    ->ArgName("bytes")
    ->Arg(512)
    ->Arg(4096)
    ->Arg(64 * 1024);
BENCHMARK_CAPTURE(BM_Seal, aes_256_gcm, CipherSuite::Aes256Gcm)
    ->ArgName("bytes")
    ->Arg(512)
    ->Arg(4096)
    ->Arg(64 * 1024);
BENCHMARK_CAPTURE(BM_Open, aes_256_gcm, CipherSuite::Aes256Gcm)
    ->ArgName("bytes")
    ->Arg(512)
    ->Arg(4096)
    ->Arg(64 * 1024);

}  // namespace
}  // namespace skv::microbench
