// skv-test-modules: util sstable
#include <catch2/catch.hpp>

#include <bit>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sstable/bloom.h"

using namespace skv;

namespace {

std::string key_for(uint64_t i, std::mt19937_64& rng) {
  // Varied lengths (0..40 bytes) and shared prefixes, as real user keys have.
  std::string k = "user/" + std::to_string(i);
  const size_t extra = rng() % 30;
  for (size_t j = 0; j < extra; ++j) k.push_back(static_cast<char>(rng()));
  if (i % 97 == 0) k.clear();
  return k;
}

}  // namespace

TEST_CASE("bloom filter has no false negatives", "[bloom]") {
  for (int bits : {1, 4, 10, 20}) {
    const uint64_t seed = 31 + static_cast<uint64_t>(bits);
    INFO("seed " << seed << " bits_per_key " << bits);
    std::mt19937_64 rng(seed);
    BloomFilterBuilder b(bits);
    std::vector<std::string> keys;
    for (uint64_t i = 0; i < 10000; ++i) {
      keys.push_back(key_for(i, rng));
      b.add_key(keys.back());
    }
    std::string data;
    b.finish(&data);
    BloomFilter f;
    REQUIRE(f.parse(data));
    size_t misses = 0;
    for (const auto& k : keys) misses += f.may_contain(k) ? 0 : 1;
    CHECK(misses == 0);
  }
}

TEST_CASE("bloom filter false-positive rate at 10 bits per key", "[bloom]") {
  const uint64_t seed = 2024;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  BloomFilterBuilder b(10);
  std::set<std::string> present;
  while (present.size() < 10000) present.insert("k" + std::to_string(rng() % 100000000));
  for (const auto& k : present) b.add_key(k);
  std::string data;
  b.finish(&data);
  CHECK(data.size() == 10000 * 10 / 8 + 1);
  BloomFilter f;
  REQUIRE(f.parse(data));
  size_t tested = 0, positives = 0;
  while (tested < 100000) {
    std::string k = "k" + std::to_string(rng() % 100000000);
    if (present.count(k) != 0) continue;
    ++tested;
    positives += f.may_contain(k) ? 1 : 0;
  }
  const double rate = static_cast<double>(positives) / static_cast<double>(tested);
  INFO("false-positive rate " << rate);
  CHECK(rate < 0.02);
  CHECK(rate > 0.0);  // a filter that always says no would be broken
}

TEST_CASE("bloom filter with few or no keys", "[bloom]") {
  BloomFilterBuilder empty(10);
  std::string data;
  empty.finish(&data);
  CHECK(data.size() == 64 / 8 + 1);
  BloomFilter f;
  REQUIRE(f.parse(data));
  CHECK_FALSE(f.may_contain("anything"));
  CHECK_FALSE(f.may_contain(""));

  BloomFilterBuilder one(10);
  one.add_key("solo");
  data.clear();
  one.finish(&data);
  REQUIRE(f.parse(data));
  CHECK(f.may_contain("solo"));

  BloomFilter unset;
  CHECK(unset.may_contain("x"));  // no filter: cannot rule anything out
}

TEST_CASE("bloom probe count and malformed filters", "[bloom]") {
  CHECK(bloom_num_probes(1) == 1);
  CHECK(bloom_num_probes(10) == 7);
  CHECK(bloom_num_probes(20) == 14);
  CHECK(bloom_num_probes(100) == 30);
  CHECK(bloom_num_probes(0) == 1);

  BloomFilter f;
  CHECK_FALSE(f.parse(""));
  CHECK_FALSE(f.parse(std::string(1, '\x05')));
  CHECK_FALSE(f.parse(std::string(8, '\0') + std::string(1, '\0')));    // zero probes
  CHECK_FALSE(f.parse(std::string(8, '\0') + std::string(1, '\x1f')));  // 31 probes
  CHECK(f.parse(std::string(8, '\0') + std::string(1, '\x1e')));
}

TEST_CASE("bloom hash is stable and well spread", "[bloom]") {
  // The hash is part of the on-disk format: these values must never change.
  CHECK(bloom_hash("") == bloom_hash(""));
  const uint64_t golden_empty = bloom_hash("");
  const uint64_t golden_abc = bloom_hash("abc");
  const uint64_t golden_long = bloom_hash("a key longer than sixteen bytes");
  INFO(std::hex << golden_empty << " " << golden_abc << " " << golden_long);
  CHECK(golden_empty == 0xfabc93dc0fb5a481ull);
  CHECK(golden_abc == 0xc6d77547ab1c1102ull);
  CHECK(golden_long == 0x4f37563e66932539ull);

  // Keys differing in one bit or by length give different hashes, and the bits are balanced.
  std::set<uint64_t> seen;
  size_t ones = 0;
  for (int i = 0; i < 4096; ++i) {
    std::string k = "prefix-" + std::to_string(i);
    const uint64_t h = bloom_hash(k);
    seen.insert(h);
    ones += static_cast<size_t>(std::popcount(h));
  }
  CHECK(seen.size() == 4096);
  const double avg = static_cast<double>(ones) / 4096.0;
  CHECK(avg > 31.0);
  CHECK(avg < 33.0);
  CHECK(bloom_hash(std::string(1, '\0')) != bloom_hash(std::string(2, '\0')));
  CHECK(bloom_hash("abcdefgh") != bloom_hash("abcdefgi"));
}
