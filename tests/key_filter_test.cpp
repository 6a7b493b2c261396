// skv-test-modules: util sstable memtable
#include <catch2/catch.hpp>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "format/internal_key.h"
#include "memtable/key_filter.h"
#include "memtable/memtable.h"

using namespace skv;

namespace {

// Keys of varied lengths (0..60 bytes) with shared prefixes, as user keys have.
std::vector<std::string> keys_of(const std::string& tag, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::string k = tag + "/" + std::to_string(i);
    const size_t extra = rng() % 48;
    for (size_t j = 0; j < extra; ++j) k.push_back(static_cast<char>(rng()));
    keys.push_back(std::move(k));
  }
  return keys;
}

}  // namespace

TEST_CASE("a key filter never forgets a key it was given", "[key_filter]") {
  const size_t bytes = GENERATE(size_t{1}, size_t{64}, size_t{1000}, size_t{1} << 16);
  INFO("filter bytes " << bytes);
  KeyFilter f(bytes);
  CHECK(f.memory_usage() >= bytes);
  CHECK(f.memory_usage() % KeyFilter::kLineBytes == 0);
  const std::vector<std::string> keys = keys_of("in", 20000, 7);
  for (const auto& k : keys) f.add(k);
  f.add("");
  int missing = 0;
  for (const auto& k : keys) missing += f.may_contain(k) ? 0 : 1;
  CHECK(missing == 0);
  CHECK(f.may_contain(""));
}

TEST_CASE("a key filter of 16 bits a key turns away almost every other key", "[key_filter]") {
  constexpr int kKeys = 20000;
  KeyFilter f(kKeys * 16 / 8);
  for (const auto& k : keys_of("in", kKeys, 11)) f.add(k);
  const std::vector<std::string> others = keys_of("out", 100000, 13);
  int passed = 0;
  for (const auto& k : others) passed += f.may_contain(k) ? 1 : 0;
  // A blocked filter with 6 probes at 16 bits a key lets about 0.1% through; a filter that put
  // every key in one line, or used few bits of the hash, would let most through.
  INFO(passed << " of " << others.size() << " absent keys passed");
  CHECK(passed < static_cast<int>(others.size() / 100));
}

TEST_CASE("a key filter of no bytes holds nothing and lets every key through", "[key_filter]") {
  KeyFilter f(0);
  CHECK(f.memory_usage() == 0);
  f.add("a");
  CHECK(f.may_contain("a"));
  CHECK(f.may_contain("never added"));
}

#ifndef __EMSCRIPTEN__
// Threads: native builds only (the wasm32 build has none).
TEST_CASE("a key filter answers readers while writers add keys", "[key_filter]") {
  // Two writers add disjoint keys and publish how many they added with release ordering; readers
  // check that every published key is reported present. Small, so lines are shared and the
  // writers' ORs meet on the same words.
  constexpr int kPerWriter = 20000;
  KeyFilter f(2048);
  const std::vector<std::string> a = keys_of("a", kPerWriter, 17);
  const std::vector<std::string> b = keys_of("b", kPerWriter, 19);
  std::atomic<int> published_a{0}, published_b{0}, failures{0};
  std::atomic<bool> done{false};
  auto writer = [&f](const std::vector<std::string>& keys, std::atomic<int>& published) {
    for (size_t i = 0; i < keys.size(); ++i) {
      f.add(keys[i]);
      published.store(static_cast<int>(i + 1), std::memory_order_release);
    }
  };
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (!done.load(std::memory_order_acquire)) {
      const int na = published_a.load(std::memory_order_acquire);
      const int nb = published_b.load(std::memory_order_acquire);
      for (int i = 0; i < 64; ++i) {
        if (na > 0 && !f.may_contain(a[rng() % static_cast<uint64_t>(na)])) failures.fetch_add(1);
        if (nb > 0 && !f.may_contain(b[rng() % static_cast<uint64_t>(nb)])) failures.fetch_add(1);
      }
    }
  };
  std::thread r1(reader, 23), r2(reader, 29);
  std::thread w1(writer, std::cref(a), std::ref(published_a));
  std::thread w2(writer, std::cref(b), std::ref(published_b));
  w1.join();
  w2.join();
  done.store(true, std::memory_order_release);
  r1.join();
  r2.join();
  CHECK(failures.load() == 0);
  for (const auto& k : a) REQUIRE(f.may_contain(k));
  for (const auto& k : b) REQUIRE(f.may_contain(k));
}

#endif  // __EMSCRIPTEN__

TEST_CASE("a memtable with a key filter answers reads like one without", "[key_filter][memtable]") {
  MemTable plain;
  MemTable filtered(Arena::kBlockSize, 512);
  CHECK(filtered.approximate_memory_usage() >= plain.approximate_memory_usage() + 512);
  const std::vector<std::string> keys = keys_of("k", 3000, 31);
  SequenceNumber seq = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const ValueKind kind = i % 7 == 0 ? ValueKind::Delete : ValueKind::Value;
    ++seq;
    plain.add(seq, kind, keys[i], "v" + std::to_string(i), seq);
    filtered.add(seq, kind, keys[i], "v" + std::to_string(i), seq);
  }
  // Present keys at every snapshot, absent keys, and a key longer than the stack search buffer.
  std::vector<std::string> probes = keys;
  for (const auto& k : keys_of("absent", 3000, 37)) probes.push_back(k);
  const std::string long_key(5000, 'x');
  ++seq;
  plain.add(seq, ValueKind::Value, long_key, "long", seq);
  filtered.add(seq, ValueKind::Value, long_key, "long", seq);
  probes.push_back(long_key);
  probes.push_back(std::string(5000, 'y'));
  int differences = 0, found = 0;
  for (const SequenceNumber snap : {SequenceNumber{0}, SequenceNumber{1500}, kMaxSequenceNumber}) {
    for (const auto& k : probes) {
      MemTable::GetResult x{}, y{};
      const bool hx = plain.get(k, snap, &x);
      const bool hy = filtered.get(k, snap, &y);
      found += hx ? 1 : 0;
      if (hx != hy || (hx && (x.kind != y.kind || x.sequence != y.sequence || x.value != y.value ||
                              x.timestamp != y.timestamp))) {
        ++differences;
      }
    }
  }
  CHECK(differences == 0);
  // Snapshot 0 sees nothing, 1500 sees the first 1,500 keys (deletes are found too), the last all.
  CHECK(found == 1500 + 3001);
}
