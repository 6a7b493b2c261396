// skv-test-modules: util memtable
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "format/internal_key.h"
#include "memtable/memtable.h"

using namespace skv;

namespace {

using Model = std::map<std::string, std::string, InternalKeyLess>;

// A small key space with awkward bytes (empty-adjacent, \0, \xff, prefixes of each other).
std::vector<std::string> key_space(std::mt19937_64& rng, int n) {
  std::vector<std::string> keys = {"a",    "ab",       "abc", std::string("a\0", 2),
                                   "\xff", "\xff\xff", "b",   std::string(1, '\0')};
  while (static_cast<int>(keys.size()) < n) {
    std::string k(1 + rng() % 12, '\0');
    for (auto& c : k) c = static_cast<char>('a' + rng() % 4);
    keys.push_back(k);
  }
  return keys;
}

// The newest version of user_key with sequence <= snapshot, from the model.
const Model::value_type* model_get(const Model& m, std::string_view user_key, SequenceNumber snap) {
  auto it = m.lower_bound(make_seek_key(user_key, std::min(snap, kMaxSequenceNumber)));
  if (it == m.end() || extract_user_key(it->first) != user_key) return nullptr;
  return &*it;
}

void check_at(const InternalIterator& it, const Model& m, Model::const_iterator pos) {
  REQUIRE(it.status().ok());
  if (pos == m.end()) {
    CHECK_FALSE(it.valid());
  } else {
    REQUIRE(it.valid());
    CHECK(it.key() == pos->first);
    CHECK(it.value() == pos->second);
  }
}

Model::const_iterator step_back(const Model& m, Model::const_iterator pos) {
  return pos == m.begin() ? m.end() : std::prev(pos);
}

}  // namespace

TEST_CASE("a new memtable is empty", "[memtable]") {
  MemTable mt;
  CHECK(mt.empty());
  CHECK(mt.num_entries() == 0);
  CHECK(mt.largest_sequence() == 0);
  MemTable::GetResult r;
  CHECK_FALSE(mt.get("a", kMaxSequenceNumber, &r));
  auto it = mt.new_iterator();
  it->seek_first();
  CHECK_FALSE(it->valid());
  it->seek_last();
  CHECK_FALSE(it->valid());
  CHECK(it->status().ok());
}

TEST_CASE("memtable matches a model: iteration, seeks and snapshot reads", "[memtable]") {
  const uint64_t seed = 86420;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::vector<std::string> keys = key_space(rng, 60);
  // A key index sized for fewer keys than the test writes (it grows on the way) and ones sized
  // for more.
  const size_t expected_keys = GENERATE(size_t{0}, size_t{64}, size_t{4096});
  INFO("expected keys " << expected_keys);
  MemTable mt(Arena::kBlockSize, expected_keys);
  Model model;
  SequenceNumber seq = 0;
  size_t last_usage = mt.approximate_memory_usage();
  for (int i = 0; i < 4000; ++i) {
    // Several writes may share a sequence number (one batch), with distinct keys.
    if (rng() % 3 != 0 || seq == 0) seq += 1 + rng() % 3;
    const std::string& k = keys[rng() % keys.size()];
    const ValueKind kind = rng() % 4 == 0 ? ValueKind::Delete : ValueKind::Value;
    const uint64_t ts = rng();
    std::string ikey = make_internal_key(k, seq, kind, ts);
    if (model.count(ikey) != 0) continue;
    // One version per (user key, sequence).
    if (model.count(make_internal_key(
            k, seq, kind == ValueKind::Value ? ValueKind::Delete : ValueKind::Value, 0)) != 0) {
      continue;
    }
    std::string value = kind == ValueKind::Value
                            ? "v" + std::to_string(i) + std::string(rng() % 50, 'x')
                            : std::string();
    mt.add(seq, kind, k, value, ts);
    model.emplace(std::move(ikey), value);
    CHECK(mt.approximate_memory_usage() >= last_usage);
    last_usage = mt.approximate_memory_usage();
  }
  CHECK(mt.num_entries() == model.size());
  CHECK(mt.largest_sequence() == seq);
  CHECK_FALSE(mt.empty());
  CHECK(mt.approximate_memory_usage() > 4000 * kInternalKeySuffix);

  auto it = mt.new_iterator();
  SECTION("full scans in both directions") {
    auto m = model.cbegin();
    for (it->seek_first(); it->valid(); it->next(), ++m) check_at(*it, model, m);
    CHECK(m == model.cend());
    auto rm = model.crbegin();
    for (it->seek_last(); it->valid(); it->prev(), ++rm) {
      CHECK(it->key() == rm->first);
    }
    CHECK(rm == model.crend());
  }
  SECTION("seeks and random walks with direction switches") {
    for (int round = 0; round < 1500; ++round) {
      const std::string& k = keys[rng() % keys.size()];
      const SequenceNumber s = rng() % (seq + 2);
      const std::string target =
          make_internal_key(k, s, rng() % 2 ? ValueKind::Value : ValueKind::Delete, rng());
      Model::const_iterator m;
      if (rng() % 2 == 0) {
        it->seek(target);
        m = model.lower_bound(target);
      } else {
        it->seek_for_prev(target);
        m = step_back(model, model.upper_bound(target));
      }
      check_at(*it, model, m);
      for (int step = 0; step < 12 && it->valid(); ++step) {
        if (rng() % 2 == 0) {
          it->next();
          ++m;
        } else {
          it->prev();
          m = step_back(model, m);
        }
        check_at(*it, model, m);
      }
    }
  }
  SECTION("get at many snapshots") {
    std::vector<std::string> probe = keys;
    probe.push_back("absent");
    probe.push_back("");
    for (const std::string& k : probe) {
      for (SequenceNumber snap : {SequenceNumber{0}, SequenceNumber{1}, seq / 3, seq / 2, seq - 1,
                                  seq, seq + 10, kMaxSequenceNumber}) {
        INFO("key '" << k << "' snapshot " << snap);
        MemTable::GetResult r;
        const bool found = mt.get(k, snap, &r);
        const Model::value_type* want = model_get(model, k, snap);
        REQUIRE(found == (want != nullptr));
        if (!found) continue;
        ParsedInternalKey p;
        REQUIRE(parse_internal_key(want->first, &p));
        CHECK(r.kind == p.kind);
        CHECK(r.sequence == p.sequence);
        CHECK(r.sequence <= snap);
        CHECK(r.timestamp == p.timestamp);
        CHECK(r.value == want->second);
      }
    }
  }
}

TEST_CASE("versions of a key added out of sequence order sort by sequence", "[memtable]") {
  // Commits arrive in sequence order, but add() does not rely on it: a version older than the
  // key's newest goes to its place among the key's versions.
  std::mt19937_64 rng(975);
  MemTable mt;
  Model model;
  std::vector<SequenceNumber> seqs;
  for (SequenceNumber s = 1; s <= 300; ++s) seqs.push_back(s);
  std::shuffle(seqs.begin(), seqs.end(), rng);
  for (SequenceNumber s : seqs) {
    const std::string k = "k" + std::to_string(rng() % 7);
    const std::string v = "v" + std::to_string(s);
    mt.add(s, ValueKind::Value, k, v, s);
    model.emplace(make_internal_key(k, s, ValueKind::Value, s), v);
  }
  auto it = mt.new_iterator();
  auto m = model.cbegin();
  for (it->seek_first(); it->valid(); it->next(), ++m) check_at(*it, model, m);
  CHECK(m == model.cend());
  auto rm = model.crbegin();
  for (it->seek_last(); it->valid(); it->prev(), ++rm) CHECK(it->key() == rm->first);
  CHECK(rm == model.crend());
  for (int i = 0; i < 7; ++i) {
    const std::string k = "k" + std::to_string(i);
    for (SequenceNumber snap = 0; snap <= 301; snap += 7) {
      MemTable::GetResult r;
      const Model::value_type* want = model_get(model, k, snap);
      REQUIRE(mt.get(k, snap, &r) == (want != nullptr));
      if (want != nullptr) CHECK(r.value == want->second);
    }
  }
}

// Threads: native builds only (the wasm32 build has none).
#ifndef __EMSCRIPTEN__
TEST_CASE("memtable readers run beside one writer without locks", "[memtable]") {
  const uint64_t seed = 55;
  INFO("seed " << seed);
  constexpr int kWrites = 20000;
  constexpr int kKeys = 200;
  const size_t expected_keys = GENERATE(size_t{0}, size_t{256});
  INFO("expected keys " << expected_keys);
  MemTable mt(Arena::kBlockSize, expected_keys);
  std::atomic<SequenceNumber> visible{0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::atomic<int> started{0};
  auto key_of = [](uint64_t i) { return "key" + std::to_string(i % kKeys); };
  // The value written at sequence s for key k, so a reader can check what it gets.
  auto value_of = [](std::string_view k, SequenceNumber s) {
    return std::string(k) + "@" + std::to_string(s);
  };

  auto reader = [&](uint64_t reader_seed) {
    std::mt19937_64 rng(reader_seed);
    started.fetch_add(1);
    auto it = mt.new_iterator();
    int pass = 0;
    while (!done.load(std::memory_order_acquire) || pass < 2) {
      const SequenceNumber snap = visible.load(std::memory_order_acquire);
      // Writes go to key (s - 1) % kKeys at sequence s, so the newest visible version of a key
      // is known exactly.
      for (int i = 0; i < 20; ++i) {
        const uint64_t k = rng() % kKeys;
        const std::string key = key_of(k);
        MemTable::GetResult r;
        const bool found = mt.get(key, snap, &r);
        SequenceNumber want = 0;
        if (snap >= k + 1) want = snap - ((snap - (k + 1)) % kKeys);
        if (found != (want != 0)) {
          failures.fetch_add(1);
        } else if (found && (r.sequence != want || r.value != value_of(key, want))) {
          failures.fetch_add(1);
        }
      }
      // A scan is strictly ordered and every entry is well formed.
      std::string last;
      size_t n = 0;
      for (it->seek_first(); it->valid() && n < 2000; it->next(), ++n) {
        ParsedInternalKey p;
        if (!parse_internal_key(it->key(), &p) || it->value() != value_of(p.user_key, p.sequence) ||
            (!last.empty() && compare_internal_keys(last, it->key()) >= 0)) {
          failures.fetch_add(1);
        }
        last.assign(it->key());
      }
      ++pass;
    }
  };
  std::thread r1(reader, seed + 1);
  std::thread r2(reader, seed + 2);
  while (started.load() < 2) std::this_thread::yield();
  for (SequenceNumber s = 1; s <= kWrites; ++s) {
    const std::string key = key_of(s - 1);
    mt.add(s, ValueKind::Value, key, value_of(key, s), s * 10);
    visible.store(s, std::memory_order_release);
    if (s % 16 == 0) std::this_thread::yield();
  }
  done.store(true, std::memory_order_release);
  r1.join();
  r2.join();
  CHECK(failures.load() == 0);
  CHECK(mt.num_entries() == kWrites);
  CHECK(mt.largest_sequence() == kWrites);
}
#endif  // __EMSCRIPTEN__
