// skv-test-modules: util sstable memtable
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "format/internal_key.h"
#include "memtable/key_index.h"
#include "memtable/memtable.h"
#include "support/counting_blocks.h"

using namespace skv;

namespace {

// Test entries: an 8-byte version, then the user key's length (4 bytes) and bytes. Kept in a
// deque, so their addresses never change.
class Entries {
 public:
  const char* add(std::string_view key, uint64_t version) {
    std::string e(12 + key.size(), '\0');
    std::memcpy(e.data(), &version, 8);
    const auto len = static_cast<uint32_t>(key.size());
    std::memcpy(e.data() + 8, &len, 4);
    if (!key.empty()) std::memcpy(e.data() + 12, key.data(), key.size());
    store_.push_back(std::move(e));
    return store_.back().data();
  }
  static uint64_t version(const char* e) {
    uint64_t v;
    std::memcpy(&v, e, 8);
    return v;
  }
  static std::string_view key(const char* e) {
    uint32_t len;
    std::memcpy(&len, e + 8, 4);
    return {e + 12, len};
  }
  static bool newer(const char* a, const char* b) { return version(a) > version(b); }

 private:
  std::deque<std::string> store_;
};

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

TEST_CASE("a key index finds the newest entry of every key as it grows", "[key_index]") {
  const size_t expected = GENERATE(size_t{0}, size_t{20000});
  INFO("expected keys " << expected);
  Entries entries;
  KeyIndex index(expected, &Entries::key, &Entries::newer);
  const size_t first_bytes = index.memory_usage();
  const std::vector<std::string> keys = keys_of("in", 20000, 7);
  for (const auto& k : keys) index.put(k, entries.add(k, 1));
  index.put("", entries.add("", 1));
  CHECK(index.keys() == keys.size() + 1);
  if (expected == 0) {
    // Grew from 128 slots: the tables it outgrew stay counted, below twice the current one.
    CHECK(index.memory_usage() > first_bytes);
  } else {
    CHECK(index.memory_usage() == first_bytes);  // sized for them: never grew
  }
  // 7/10 full at most, in slots of 8 bytes.
  CHECK(index.memory_usage() >= (keys.size() + 1) * 8 * 10 / 7);

  // Newer versions of every other key replace the old; an older one given later does not.
  for (size_t i = 0; i < keys.size(); i += 2) index.put(keys[i], entries.add(keys[i], 5));
  for (size_t i = 0; i < keys.size(); i += 4) index.put(keys[i], entries.add(keys[i], 3));
  CHECK(index.keys() == keys.size() + 1);

  int wrong = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const char* e = nullptr;
    if (index.find(keys[i], &e) != KeyIndex::Lookup::Found) {
      ++wrong;
    } else if (Entries::key(e) != keys[i] || Entries::version(e) != (i % 2 == 0 ? 5u : 1u)) {
      ++wrong;
    }
  }
  CHECK(wrong == 0);
  const char* e = nullptr;
  REQUIRE(index.find("", &e) == KeyIndex::Lookup::Found);
  CHECK(Entries::key(e).empty());

  // Absent keys are told apart exactly (no false positives, unlike a filter), including keys
  // that share a prefix with present ones.
  int found = 0;
  for (const auto& k : keys_of("out", 50000, 13)) {
    found += index.find(k, &e) == KeyIndex::Lookup::Absent ? 0 : 1;
  }
  const std::unordered_set<std::string> present(keys.begin(), keys.end());
  for (size_t i = 0; i < 1000; ++i) {
    for (const std::string& k : {keys[i] + "x", keys[i].substr(0, keys[i].size() - 1)}) {
      if (present.count(k) == 0) found += index.find(k, &e) == KeyIndex::Lookup::Absent ? 0 : 1;
    }
  }
  CHECK(found == 0);
}

TEST_CASE("a key index keeps every key's newest entry while its keys move to a bigger table",
          "[key_index]") {
  // 128 slots to start with: the 90th key starts a move to 256 slots, eight slots a put.
  Entries entries;
  KeyIndex index(0, &Entries::key, &Entries::newer);
  const std::vector<std::string> keys = keys_of("m", 400, 41);
  std::map<std::string, uint64_t> newest;
  auto check_all = [&] {
    int wrong = 0;
    for (const auto& [k, v] : newest) {
      const char* e = nullptr;
      if (index.find(k, &e) != KeyIndex::Lookup::Found || Entries::key(e) != k ||
          Entries::version(e) != v) {
        ++wrong;
      }
    }
    return wrong;
  };
  auto put = [&](const std::string& k, uint64_t v) {
    index.put(k, entries.add(k, v));
    uint64_t& n = newest[k];
    n = std::max(n, v);
  };
  for (int i = 0; i < 90; ++i) put(keys[i], 10);
  const size_t grown = index.memory_usage();
  CHECK(grown == (128 + 256) * 8);
  CHECK(check_all() == 0);
  // Keys of the old table, before their slots move: newer versions, then older ones.
  for (int i = 0; i < 90; i += 3) {
    put(keys[i], 20);
    CHECK(check_all() == 0);
  }
  for (int i = 1; i < 90; i += 3) {
    put(keys[i], 5);
    CHECK(check_all() == 0);
  }
  // New keys while the move goes on, and past the next growth.
  for (int i = 90; i < 400; ++i) {
    put(keys[i], 10);
    if (i % 7 == 0) put(keys[static_cast<size_t>(i) / 2], 30);
    REQUIRE(check_all() == 0);
  }
  CHECK(index.keys() == 400);
  CHECK(index.memory_usage() == (128 + 256 + 512 + 1024) * 8);
}

TEST_CASE("a key index takes its larger tables from the memory blocks it is given", "[key_index]") {
  // Preferred blocks of 4 KiB: tables of 512 slots and more come from them, smaller ones from
  // calloc. Blocks of those sizes were dirtied and freed first, so a table that came back
  // unzeroed would find garbage in its slots.
  auto blocks = std::make_shared<testing::CountingBlocks>(4096);
  for (size_t bytes : {4096u, 8192u, 16384u, 32768u}) {
    char* p = heap_memory_blocks()->allocate(bytes);
    std::memset(p, 0xff, bytes);
    heap_memory_blocks()->release(p, bytes);
  }
  {
    Entries entries;
    KeyIndex index(0, &Entries::key, &Entries::newer, blocks);
    CHECK(blocks->allocations() == 0);  // 128 slots: 1 KiB from calloc
    const std::vector<std::string> keys = keys_of("b", 2000, 43);
    for (const auto& k : keys) index.put(k, entries.add(k, 1));
    // 2,000 keys: 128, 256, ..., 4,096 slots; the last four are whole blocks.
    CHECK(blocks->sizes() == std::set<size_t>{4096, 8192, 16384, 32768});
    CHECK(blocks->live_blocks() == 4);
    CHECK(index.memory_usage() == (128 + 256 + 512 + 1024 + 2048 + 4096) * 8);
    int wrong = 0;
    for (const auto& k : keys) {
      const char* e = nullptr;
      if (index.find(k, &e) != KeyIndex::Lookup::Found || Entries::key(e) != k) ++wrong;
    }
    for (const auto& k : keys_of("nb", 2000, 47)) {
      const char* e = nullptr;
      if (index.find(k, &e) != KeyIndex::Lookup::Absent) ++wrong;
    }
    CHECK(wrong == 0);
  }
  CHECK(blocks->live_blocks() == 0);
  CHECK(blocks->bad_releases() == 0);
}

#if UINTPTR_MAX > 0xffffffffu
TEST_CASE("a key index given a pointer above 48 bits turns off and defers to the skiplist",
          "[key_index]") {
  Entries entries;
  KeyIndex index(0, &Entries::key, &Entries::newer);
  index.put("a", entries.add("a", 1));
  const char* e = nullptr;
  REQUIRE(index.find("a", &e) == KeyIndex::Lookup::Found);
  // Never dereferenced: the index turns off before it looks at the entry.
  index.put("b", reinterpret_cast<const char*>(uintptr_t{1} << 50));
  CHECK(index.find("a", &e) == KeyIndex::Lookup::Unknown);
  CHECK(index.find("b", &e) == KeyIndex::Lookup::Unknown);
  CHECK(index.find("never", &e) == KeyIndex::Lookup::Unknown);
  index.put("c", entries.add("c", 1));  // stays off
  CHECK(index.find("c", &e) == KeyIndex::Lookup::Unknown);
}
#endif

TEST_CASE("a memtable reads every key at every snapshot while its index grows",
          "[key_index][memtable]") {
  // 3,000 keys written three times over, deletes among them, and a key longer than the stack
  // search buffer; read back at snapshots before, between and after the versions, against a
  // model of internal keys.
  MemTable mem(Arena::kBlockSize, 0);
  std::map<std::string, std::string, InternalKeyLess> model;
  const std::vector<std::string> keys = keys_of("k", 3000, 31);
  std::vector<std::string> all = keys;
  all.push_back(std::string(5000, 'x'));
  SequenceNumber seq = 0;
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < all.size(); ++i) {
      if ((i + static_cast<size_t>(round)) % 5 == 0) continue;  // not every key every round
      const ValueKind kind =
          (i + static_cast<size_t>(round)) % 7 == 0 ? ValueKind::Delete : ValueKind::Value;
      ++seq;
      const std::string value = kind == ValueKind::Value ? "v" + std::to_string(seq) : "";
      mem.add(seq, kind, all[i], value, seq * 10);
      model.emplace(make_internal_key(all[i], seq, kind, seq * 10), value);
    }
  }
  CHECK(mem.distinct_keys() == all.size());  // every key is written in some round
  std::vector<std::string> probes = all;
  for (const auto& k : keys_of("absent", 2000, 37)) probes.push_back(k);
  probes.push_back(std::string(5000, 'y'));
  int differences = 0, found = 0;
  for (const SequenceNumber snap :
       {SequenceNumber{0}, SequenceNumber{1}, seq / 3, seq / 2, seq - 1, seq, kMaxSequenceNumber}) {
    for (const auto& k : probes) {
      MemTable::GetResult r{};
      const bool hit = mem.get(k, snap, &r);
      auto it = model.lower_bound(make_seek_key(k, std::min(snap, kMaxSequenceNumber)));
      const bool want = it != model.end() && extract_user_key(it->first) == k;
      found += hit ? 1 : 0;
      if (hit != want) {
        ++differences;
      } else if (hit) {
        const uint64_t trailer = extract_trailer(it->first);
        if (r.sequence != trailer >> 8 || r.kind != static_cast<ValueKind>(trailer & 0xff) ||
            r.value != it->second || r.timestamp != extract_timestamp(it->first)) {
          ++differences;
        }
      }
      auto any = model.lower_bound(make_seek_key(k, kMaxSequenceNumber));
      const bool in_model = any != model.end() && extract_user_key(any->first) == k;
      if (mem.may_contain(k) != in_model) ++differences;
    }
  }
  CHECK(differences == 0);
  CHECK(found > 0);
}

#ifndef __EMSCRIPTEN__
// Threads: native builds only (the wasm32 build has none).
TEST_CASE("a key index answers readers while its writer adds versions and grows", "[key_index]") {
  // One writer puts version i of key i % kKeys and publishes i + 1 with release ordering; readers
  // check that every key with a published version is found, with that version or a newer one.
  constexpr int kKeys = 30000;
  constexpr int kPuts = 90000;
  Entries entries;
  const std::vector<std::string> keys = keys_of("c", kKeys, 17);
  std::vector<const char*> made;
  made.reserve(kPuts);
  for (int i = 0; i < kPuts; ++i) made.push_back(entries.add(keys[i % kKeys], i));
  KeyIndex index(0, &Entries::key, &Entries::newer);
  std::atomic<int> published{0}, failures{0}, checked{0};
  std::atomic<bool> done{false};
  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    while (!done.load(std::memory_order_acquire)) {
      const int n = published.load(std::memory_order_acquire);
      for (int i = 0; i < 64 && n > 0; ++i) {
        const int j = static_cast<int>(rng() % static_cast<uint64_t>(n));
        const char* e = nullptr;
        if (index.find(keys[j % kKeys], &e) != KeyIndex::Lookup::Found ||
            Entries::key(e) != keys[j % kKeys] || Entries::version(e) < static_cast<uint64_t>(j)) {
          failures.fetch_add(1);
        }
        checked.fetch_add(1, std::memory_order_relaxed);
      }
    }
  };
  std::thread r1(reader, 23), r2(reader, 29);
  for (int i = 0; i < kPuts; ++i) {
    index.put(keys[i % kKeys], made[i]);
    published.store(i + 1, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  r1.join();
  r2.join();
  CHECK(failures.load() == 0);
  CHECK(checked.load() > 0);
  CHECK(index.keys() == kKeys);
  for (int k = 0; k < kKeys; ++k) {
    const char* e = nullptr;
    REQUIRE(index.find(keys[k], &e) == KeyIndex::Lookup::Found);
    REQUIRE(Entries::version(e) == static_cast<uint64_t>(kPuts - kKeys + k));
  }
}
#endif  // __EMSCRIPTEN__
