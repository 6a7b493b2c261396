// skv-test-modules: util wal memtable sstable version engine memory counting_alloc
// skv-test-label: heavy
// What one transaction may make the process hold, at the real limit (kMaxTransactionSize),
// through the public API on the in-memory platform. Memory is measured with the counting
// allocator (support/counting_alloc): the bytes the process asked for and has not freed, at
// their peak. No timings.
//
//   - many tiny keys: per-write overhead counts, so the transaction is refused before the
//     process holds more than the limit, and stays usable;
//   - savepoints with many overwrites: the versions a savepoint can return to count, and
//     versions nothing needs are reclaimed;
//   - writes after iterators are opened: they copy nothing, so the bytes allocated per write
//     stay small, and every iterator still shows the transaction as it was when it was made.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/counting_alloc/counting_alloc.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

// Beyond what the buffer counts: the arena's list of blocks and malloc-free bookkeeping.
constexpr size_t kSlack = size_t{4} << 20;

size_t live_bytes() { return allocation_counts().live_bytes; }

std::string tiny_key(uint32_t i) {
  std::string k(4, '\0');
  for (int b = 0; b < 4; ++b) k[static_cast<size_t>(b)] = static_cast<char>(i >> (24 - 8 * b));
  return k;
}

std::string key_of(uint64_t i) { return "key/" + std::to_string(i); }

std::string value_of(uint64_t id, size_t n) {
  std::string v(n, '\0');
  uint64_t h = mix64(id);
  for (size_t i = 0; i < n; ++i) {
    if (i % 8 == 0) h = mix64(h);
    v[i] = static_cast<char>('a' + (h >> (8 * (i % 8))) % 26);
  }
  return v;
}

void require_refused_at_limit(const Status& s) {
  INFO(s.to_string());
  REQUIRE(s.code() == Code::InvalidArgument);
  CHECK(s.message().find(std::to_string(kMaxTransactionSize)) != std::string::npos);
}

}  // namespace

TEST_CASE("many tiny keys are refused before the process holds more than the limit",
          "[txn][memory]") {
  Tree tree = open_or_fail(small_tree(std::make_shared<MemoryPlatform>()));
  Transaction tx = begin_or_fail(tree);
  require_ok(tx.set_savepoint());
  const size_t base = live_bytes();
  reset_peak();
  uint32_t written = 0;
  Status s;
  for (;; ++written) {
    s = tx.set(tiny_key(written), "");
    if (!s.ok()) break;
    if (written % 65536 == 0) {
      INFO("after " << written << " keys the process holds " << live_bytes() - base
                    << " more bytes");
      REQUIRE(live_bytes() - base <= kMaxTransactionSize + kSlack);
    }
  }
  require_refused_at_limit(s);
  const size_t peak = allocation_counts().peak_live_bytes - base;
  INFO(written << " keys accepted, peak " << peak << " bytes");
  CHECK(peak <= kMaxTransactionSize + kSlack);
  CHECK(written > 3000000);  // the overhead per key is some tens of bytes, not hundreds

  // Still usable: reads work, a refused write changed nothing, and after a rollback writes and
  // a commit go through.
  CHECK(get_or_fail(tx, tiny_key(0)) == std::string());
  CHECK(get_or_fail(tx, tiny_key(written)) == std::nullopt);
  CHECK(tx.del(tiny_key(written)).code() == Code::InvalidArgument);
  require_ok(tx.rollback_to_savepoint());
  require_ok(tx.set("after", "rollback"));
  require_ok(tx.commit().wait());
  Transaction check = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(check, "after") == "rollback");
  CHECK(get_or_fail(check, tiny_key(0)) == std::nullopt);
}

TEST_CASE("overwrites after a savepoint keep only the versions it can return to", "[txn][memory]") {
  constexpr int kKeys = 1000;
  constexpr size_t kValueBytes = 1024;
  Tree tree = open_or_fail(small_tree(std::make_shared<MemoryPlatform>()));
  Transaction tx = begin_or_fail(tree);
  for (int k = 0; k < kKeys; ++k) require_ok(tx.set(key_of(k), "original"));
  require_ok(tx.set_savepoint());
  const size_t base = live_bytes();
  reset_peak();
  // 400,000 overwrites of up to 1 KiB: about 200 MB of values, through one savepoint.
  for (uint64_t i = 0; i < 400000; ++i) {
    require_ok(tx.set(key_of(mix64(i) % kKeys), value_of(i, 1 + mix64(i + 1) % kValueBytes)));
    if (i % 4096 == 0) {
      INFO("after " << i << " overwrites the process holds " << live_bytes() - base
                    << " more bytes");
      REQUIRE(live_bytes() - base <= kMaxTransactionSize + kSlack);
    }
  }
  const size_t peak = allocation_counts().peak_live_bytes - base;
  INFO("peak " << peak << " bytes");
  // The current values, the savepoint's values, and what waits to be reclaimed.
  CHECK(peak <= size_t{16} << 20);
  require_ok(tx.rollback_to_savepoint());
  for (int k = 0; k < kKeys; k += 97) CHECK(get_or_fail(tx, key_of(k)) == "original");
}

TEST_CASE("a savepoint before every overwrite is refused at the limit, not past it",
          "[txn][memory]") {
  constexpr int kKeys = 1000;
  Tree tree = open_or_fail(small_tree(std::make_shared<MemoryPlatform>()));
  Transaction tx = begin_or_fail(tree);
  for (int k = 0; k < kKeys; ++k) require_ok(tx.set(key_of(k), "original"));
  const size_t base = live_bytes();
  reset_peak();
  Status s;
  uint64_t i = 0;
  bool refused_write = false;  // else the savepoint was refused
  for (;; ++i) {
    s = tx.set_savepoint();
    if (!s.ok()) break;
    s = tx.set(key_of(i % kKeys), value_of(i, 1024));
    if (!s.ok()) {
      refused_write = true;
      break;
    }
    if (i % 4096 == 0) {
      INFO("after " << i << " savepoints the process holds " << live_bytes() - base
                    << " more bytes");
      REQUIRE(live_bytes() - base <= kMaxTransactionSize + kSlack);
    }
    REQUIRE(i < 1000000);
  }
  require_refused_at_limit(s);
  const size_t peak = allocation_counts().peak_live_bytes - base;
  INFO(i << " savepoints, peak " << peak << " bytes");
  CHECK(peak <= kMaxTransactionSize + kSlack);
  CHECK(i > 200000);
  // The savepoint set before the last write returns to the value before it.
  if (refused_write) require_ok(tx.rollback_to_savepoint());
  CHECK(get_or_fail(tx, key_of((i - 1) % kKeys)) == value_of(i - 1, 1024));
  require_ok(tx.rollback_to_savepoint());
  CHECK(get_or_fail(tx, key_of((i - 1) % kKeys)) == value_of(i - 1 - kKeys, 1024));
  // Right at the limit even a tiny write may be refused (each write is charged a new block in
  // advance), but the transaction still commits what it holds.
  require_ok(tx.commit().wait());
  Transaction reader = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(reader, key_of((i - 1) % kKeys)) == value_of(i - 1 - kKeys, 1024));
}

TEST_CASE("writes after iterators are opened copy nothing", "[txn][memory]") {
  constexpr int kKeys = 200000;
  constexpr int kRounds = 300;
  Tree tree = open_or_fail(small_tree(std::make_shared<MemoryPlatform>()));
  Transaction tx = begin_or_fail(tree);
  for (int k = 0; k < kKeys; ++k) require_ok(tx.set(key_of(k), value_of(k, 100)));
  const size_t buffer = live_bytes();
  const AllocationCounts start = allocation_counts();
  reset_peak();
  // Every round opens an iterator (kept open) and writes once: the pattern of a scan-then-update
  // loop. One copy of the buffer would be some tens of megabytes.
  std::vector<Iterator> iterators;
  for (int round = 0; round < kRounds; ++round) {
    Result<Iterator> it = tx.range("", "");
    REQUIRE(it.ok());
    iterators.push_back(std::move(it).value());
    require_ok(tx.set("new/" + std::to_string(1000 + round), value_of(round, 100)));
    const uint64_t allocated = allocation_counts().allocated_bytes - start.allocated_bytes;
    INFO("round " << round << ": " << allocated << " bytes allocated since the first");
    REQUIRE(allocated <= static_cast<uint64_t>(round + 1) * (64 << 10));
  }
  const size_t peak = allocation_counts().peak_live_bytes - start.live_bytes;
  INFO("buffer about " << buffer << " bytes, peak growth " << peak);
  CHECK(peak <= size_t{kRounds} * (64 << 10));

  // Iterator i shows the first i new keys and none of the later ones.
  for (int i = 0; i < kRounds; i += 61) {
    Iterator& it = iterators[static_cast<size_t>(i)];
    int seen = 0;
    for (it.seek("new/"); it.valid(); it.next()) {
      ++seen;
      Result<std::string_view> v = it.value();
      REQUIRE(v.ok());
    }
    require_ok(it.status());
    CHECK(seen == i);
    CHECK(it.seek(key_of(kKeys - 1)));
    CHECK(it.key() == key_of(kKeys - 1));
  }
}
