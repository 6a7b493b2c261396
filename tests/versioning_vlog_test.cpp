// skv-test-modules: util wal vlog memtable sstable version engine memory fault
// Versioned queries over separated values (docs/versioning.md, docs/vlog.md): history, get_at
// and range_at read values from the value log after flushes, compactions, garbage collection and
// reopening; keys_at never reads it; and garbage collection keeps every version retention keeps.

#include <map>
#include <string>
#include <vector>

#include "platform/fault/fault_platform.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr uint64_t kT0 = 1'800'000'000'000'000'000ull;
constexpr size_t kThreshold = 256;

TreeBuilder versioned_vlog(std::shared_ptr<Platform> p, uint64_t retention) {
  TreeBuilder b = small_tree(std::move(p));
  b.with_versioning(true, retention)
      .with_enable_vlog(true)
      .with_vlog_value_threshold(kThreshold)
      .with_vlog_max_file_size(16 * 1024)
      .with_vlog_gc_ratio(0.3);
  return b;
}

std::string big_value(const std::string& key, int round) {
  std::string v = key + "@" + std::to_string(round) + ":";
  while (v.size() < kThreshold * 2) v += static_cast<char>('a' + (v.size() + round) % 26);
  return v;
}

}  // namespace

TEST_CASE("versioned reads resolve separated values through flush, compaction, GC and reopen",
          "[versioning][vlog]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  const uint64_t retention = 50'000;
  std::optional<Tree> tree(open_or_fail(versioned_vlog(fault, retention)));
  // key -> timestamp -> value ("" for a delete); one version per round and key.
  std::map<std::string, std::map<uint64_t, std::string>> versions;
  uint64_t clock = kT0;
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 30; ++i) {
      const std::string k = "key" + std::to_string(i);
      clock += 1000;
      memory->fake_clock().set_nanos(clock);
      Transaction tx = begin_or_fail(*tree);
      if (round == 5 && i % 3 == 0) {
        require_ok(tx.del(k));
        versions[k][clock] = "";
      } else if (round == 6 && i % 2 == 0) {
        const uint64_t past = clock - 15'000;  // between earlier rounds' versions
        require_ok(tx.set_at(k, big_value(k, round), past));
        versions[k][past] = big_value(k, round);
      } else {
        require_ok(tx.set(k, big_value(k, round)));
        versions[k][clock] = big_value(k, round);
      }
      require_ok(tx.commit().wait());
    }
    require_ok(tree->flush().wait());
    if (round % 3 == 2) require_ok(tree->compact_all());
  }
  memory->fake_clock().set_nanos(clock);
  require_ok(tree->compact_all());
  require_ok(tree->collect_vlog_garbage());
  CHECK(tree->stats().vlog_files >= 1);
  require_ok(tree->close());
  tree.reset();
  tree.emplace(open_or_fail(TreeBuilder(small_tree(fault))));  // versioning and values as stored

  // Every compaction's cutoff was at or before the clock's latest reading minus the retention.
  const uint64_t from = memory->fake_clock().peek_nanos() - retention;
  Transaction r = begin_or_fail(*tree, Mode::ReadOnly);
  for (const auto& [k, by_time] : versions) {
    INFO(k);
    // As of every version time inside the window, and just before it.
    for (const auto& [ts, unused] : by_time) {
      for (uint64_t t : {ts, ts - 1}) {
        if (t < from) continue;
        std::optional<std::string> want;
        auto at = by_time.upper_bound(t);
        if (at != by_time.begin() && !std::prev(at)->second.empty()) want = std::prev(at)->second;
        auto got = r.get_at(k, t);
        REQUIRE(got.ok());
        CHECK(*got == want);
      }
    }
    auto h = r.history(k);
    REQUIRE(h.ok());
    size_t in_window = 0;
    for (const auto& [ts, v] : by_time) in_window += ts > from && !v.empty();
    size_t got_in_window = 0;
    for (const auto& v : *h) {
      if (v.timestamp <= from) continue;
      ++got_in_window;
      CHECK(v.value == by_time.at(v.timestamp));
    }
    CHECK(got_in_window == in_window);
  }
  // The tree as of a time in the window, both directions, with separated values.
  const uint64_t t = clock - 20'000;
  std::vector<std::pair<std::string, std::string>> want;
  for (const auto& [k, by_time] : versions) {
    auto at = by_time.upper_bound(t);
    if (at != by_time.begin() && !std::prev(at)->second.empty()) {
      want.emplace_back(k, std::prev(at)->second);
    }
  }
  auto it = r.range_at("", "", t);
  REQUIRE(it.ok());
  std::vector<std::pair<std::string, std::string>> fwd;
  for (it->seek_first(); it->valid(); it->next()) {
    fwd.emplace_back(std::string(it->key()), std::string(it->value().value()));
  }
  require_ok(it->status());
  CHECK(fwd == want);
  size_t back = want.size();
  for (it->seek_last(); it->valid(); it->prev()) {
    REQUIRE(back > 0);
    --back;
    CHECK(it->key() == want[back].first);
    CHECK(it->value().value() == want[back].second);
  }
  require_ok(it->status());
  CHECK(back == 0);

  // keys_at reads no value log.
  const uint64_t reads = fault->call_count(FaultOp::Read, ".vlog");
  auto keys = r.keys_at("", "", t);
  REQUIRE(keys.ok());
  size_t n = 0;
  for (keys->seek_first(); keys->valid(); keys->next()) ++n;
  for (keys->seek_last(); keys->valid(); keys->prev()) ++n;
  require_ok(keys->status());
  CHECK(n == 2 * want.size());
  CHECK(fault->call_count(FaultOp::Read, ".vlog") == reads);
  require_ok(tree->close());
}
