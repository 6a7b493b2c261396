#include "workload.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

namespace skv::bench {

std::string make_key(uint32_t index) {
  const unsigned char be[4] = {
      static_cast<unsigned char>(index >> 24), static_cast<unsigned char>(index >> 16),
      static_cast<unsigned char>(index >> 8), static_cast<unsigned char>(index)};
  const unsigned long long hash = XXH64(be, sizeof be, 0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx%010u", hash, index);
  return std::string(buf, 26);
}

void make_value(Rng& rng, uint32_t index, std::string& out) {
  make_value_of_size(rng, index, rng.between(kMinValueSize, kMaxValueSize), out);
}

void make_value_of_size(Rng& rng, uint32_t index, size_t size, std::string& out) {
  // 64 symbols, so six random bits pick one.
  static constexpr char kAlphabet[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .";
  out.clear();
  out.reserve(size);
  char head[160];
  const uint64_t a = rng.next();
  const int n = std::snprintf(
      head, sizeof head, "{\"id\":%u,\"active\":%s,\"score\":%llu,\"tags\":[%u,%u,%u],\"text\":\"",
      index, (a & 1) ? "true" : "false", static_cast<unsigned long long>(a >> 40),
      static_cast<unsigned>(a >> 8) & 0xff, static_cast<unsigned>(a >> 16) & 0xff,
      static_cast<unsigned>(a >> 24) & 0xff);
  out.append(head, static_cast<size_t>(n));
  while (out.size() + 2 < size) {
    uint64_t bits = rng.next();
    for (int i = 0; i < 10 && out.size() + 2 < size; ++i, bits >>= 6)
      out.push_back(kAlphabet[bits & 63]);
  }
  out.append("\"}");
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

PhaseResult run_phase(const std::string& id, uint64_t ops, int clients, uint64_t seed,
                      const OpFn& op) {
  PhaseResult result;
  result.id = id;
  std::atomic<uint64_t> next{0};
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;
  std::vector<std::vector<uint64_t>> latencies(static_cast<size_t>(clients));
  std::vector<uint64_t> rows(static_cast<size_t>(clients), 0);
  std::vector<uint64_t> misses(static_cast<size_t>(clients), 0);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(clients));
  for (int w = 0; w < clients; ++w) {
    threads.emplace_back([&, w] {
      Rng rng(seed * 1000003 + static_cast<uint64_t>(w) + 1);
      std::vector<uint64_t>& lat = latencies[static_cast<size_t>(w)];
      lat.reserve(static_cast<size_t>(ops / static_cast<uint64_t>(clients) + 16));
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      try {
        for (;;) {
          if (failed.load(std::memory_order_relaxed)) break;
          const uint64_t index = next.fetch_add(1, std::memory_order_relaxed);
          if (index >= ops) break;
          lat.push_back(
              op(w, index, rng, rows[static_cast<size_t>(w)], misses[static_cast<size_t>(w)]));
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed.store(true);
      }
    });
  }
  while (ready.load() < clients) std::this_thread::yield();
  const uint64_t start = now_ns();
  go.store(true, std::memory_order_release);
  for (std::thread& t : threads) t.join();
  const uint64_t end = now_ns();
  if (error) std::rethrow_exception(error);

  std::vector<uint64_t> all;
  all.reserve(static_cast<size_t>(ops));
  for (int w = 0; w < clients; ++w) {
    const std::vector<uint64_t>& lat = latencies[static_cast<size_t>(w)];
    all.insert(all.end(), lat.begin(), lat.end());
    result.rows += rows[static_cast<size_t>(w)];
    result.misses += misses[static_cast<size_t>(w)];
  }
  result.ops = all.size();
  result.seconds = static_cast<double>(end - start) / 1e9;
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    const auto at = [&](double q) {
      size_t i = static_cast<size_t>(q * static_cast<double>(all.size() - 1) + 0.5);
      return all[std::min(i, all.size() - 1)];
    };
    result.p50_ns = at(0.50);
    result.p99_ns = at(0.99);
    result.max_ns = all.back();
  }
  return result;
}

}  // namespace skv::bench
