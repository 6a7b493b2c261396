// skv-test-modules: util wal memtable sstable version engine memory
// Versioned queries on the in-memory platform, whose clock the tests set: commit timestamps
// (monotonic across commits and restarts), set_at, get_at, history, range_at and keys_at in both
// directions against a model of every version, snapshots, retention in compaction, the stored
// versioning setting, and bad input.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;
constexpr uint64_t kT0 = 1'800'000'000ull * kSecond;

TreeBuilder versioned(const std::shared_ptr<MemoryPlatform>& p, uint64_t retention = 0) {
  TreeBuilder b = small_tree(p);
  b.with_versioning(true, retention);
  return b;
}

// Every version the tree holds, as the model sees it.
struct ModelVersion {
  uint64_t seq = 0;
  uint64_t ts = 0;
  bool tombstone = false;
  std::string value;
};

bool newer(const ModelVersion& a, const ModelVersion& b) {
  return a.ts != b.ts ? a.ts > b.ts : a.seq > b.seq;
}

class VersionModel {
 public:
  void add(const std::string& key, ModelVersion v) { keys_[key].push_back(std::move(v)); }

  std::vector<ModelVersion> history(const std::string& key, uint64_t snapshot,
                                    bool tombstones) const {
    std::vector<ModelVersion> out;
    auto it = keys_.find(key);
    if (it == keys_.end()) return out;
    for (const auto& v : it->second) {
      if (v.seq <= snapshot && (tombstones || !v.tombstone)) out.push_back(v);
    }
    std::sort(out.begin(), out.end(), newer);
    return out;
  }

  std::optional<std::string> get_at(const std::string& key, uint64_t ts, uint64_t snapshot) const {
    for (const auto& v : history(key, snapshot, true)) {
      if (v.ts <= ts) return v.tombstone ? std::nullopt : std::optional<std::string>(v.value);
    }
    return std::nullopt;
  }

  std::vector<std::pair<std::string, std::string>> range_at(uint64_t ts, uint64_t snapshot) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [k, unused] : keys_) {
      if (auto v = get_at(k, ts, snapshot)) out.emplace_back(k, *v);
    }
    return out;
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, unused] : keys_) out.push_back(k);
    return out;
  }

 private:
  std::map<std::string, std::vector<ModelVersion>> keys_;
};

// Sets the clock to `ts` and commits one write; returns the sequence number it got.
uint64_t commit_at(const Tree& tree, MemoryPlatform& p, uint64_t clock,
                   const std::function<void(Transaction&)>& write) {
  p.fake_clock().set_nanos(clock);
  Transaction tx = begin_or_fail(tree);
  write(tx);
  require_ok(tx.commit().wait());
  return tree.stats().last_sequence;
}

std::vector<KeyVersion> history_or_fail(const Transaction& tx, std::string_view key,
                                        HistoryOptions o = {}) {
  auto h = tx.history(key, o);
  INFO(h.status().to_string());
  REQUIRE(h.ok());
  return std::move(h).value();
}

std::optional<std::string> get_at_or_fail(const Transaction& tx, std::string_view key,
                                          uint64_t ts) {
  auto r = tx.get_at(key, ts);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return *r;
}

void check_history(const Transaction& tx, const VersionModel& m, const std::string& key,
                   uint64_t snapshot, bool tombstones) {
  HistoryOptions o;
  o.include_tombstones = tombstones;
  std::vector<KeyVersion> got = history_or_fail(tx, key, o);
  std::vector<ModelVersion> want = m.history(key, snapshot, tombstones);
  INFO("history of " << key);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CHECK(got[i].timestamp == want[i].ts);
    CHECK(got[i].tombstone == want[i].tombstone);
    CHECK(got[i].value == want[i].value);
  }
}

void check_range_at(const Transaction& tx, const VersionModel& m, uint64_t ts, uint64_t snapshot) {
  const auto want = m.range_at(ts, snapshot);
  INFO("range_at " << ts);
  auto it = tx.range_at("", "", ts);
  REQUIRE(it.ok());
  std::vector<std::pair<std::string, std::string>> fwd, bwd;
  for (it->seek_first(); it->valid(); it->next()) {
    fwd.emplace_back(std::string(it->key()), std::string(it->value().value()));
  }
  require_ok(it->status());
  for (it->seek_last(); it->valid(); it->prev()) {
    bwd.emplace_back(std::string(it->key()), std::string(it->value().value()));
  }
  require_ok(it->status());
  std::reverse(bwd.begin(), bwd.end());
  CHECK(fwd == want);
  CHECK(bwd == want);
  auto keys = tx.keys_at("", "", ts);
  REQUIRE(keys.ok());
  size_t n = 0;
  for (keys->seek_first(); keys->valid(); keys->next()) {
    REQUIRE(n < want.size());
    CHECK(keys->key() == want[n].first);
    CHECK(keys->value().status().code() == Code::InvalidArgument);
    ++n;
  }
  require_ok(keys->status());
  CHECK(n == want.size());
}

}  // namespace

TEST_CASE("versioned reads: get_at, history, set_at in the past, tombstones, same timestamps",
          "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(versioned(p));
  commit_at(tree, *p, kT0 + 10, [](Transaction& tx) { require_ok(tx.set("k", "v10")); });
  commit_at(tree, *p, kT0 + 20, [](Transaction& tx) { require_ok(tx.set("k", "v20")); });
  commit_at(tree, *p, kT0 + 30, [](Transaction& tx) { require_ok(tx.del("k")); });
  // Written later, stamped in the past: it slots into the history by its time.
  commit_at(tree, *p, kT0 + 40,
            [](Transaction& tx) { require_ok(tx.set_at("k", "v15", kT0 + 15)); });
  // Two versions with the same timestamp: the later commit wins.
  commit_at(tree, *p, kT0 + 50,
            [](Transaction& tx) { require_ok(tx.set_at("k", "v20b", kT0 + 20)); });
  // A delete stamped in the past hides "j" from its time on, not before.
  commit_at(tree, *p, kT0 + 60, [](Transaction& tx) { require_ok(tx.set_at("j", "j5", kT0 + 5)); });
  commit_at(tree, *p, kT0 + 70, [](Transaction& tx) { require_ok(tx.del_at("j", kT0 + 12)); });

  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK_FALSE(get_at_or_fail(r, "k", kT0 + 9).has_value());
  CHECK(get_at_or_fail(r, "k", kT0 + 10) == "v10");
  CHECK(get_at_or_fail(r, "k", kT0 + 16) == "v15");
  CHECK(get_at_or_fail(r, "k", kT0 + 25) == "v20b");
  CHECK_FALSE(get_at_or_fail(r, "k", kT0 + 30).has_value());  // the tombstone
  CHECK_FALSE(get_at_or_fail(r, "k", kMaxTimestamp).has_value());
  CHECK_FALSE(get_at_or_fail(r, "other", kMaxTimestamp).has_value());
  CHECK(get_at_or_fail(r, "j", kT0 + 11) == "j5");
  CHECK_FALSE(get_at_or_fail(r, "j", kT0 + 12).has_value());
  CHECK_FALSE(get_or_fail(r, "j").has_value());
  // A plain read answers the newest write, as in any tree: the set_at of the last commit.
  CHECK(get_or_fail(r, "k") == "v20b");

  std::vector<KeyVersion> h = history_or_fail(r, "k");
  REQUIRE(h.size() == 4);
  CHECK(h[0].value == "v20b");
  CHECK(h[0].timestamp == kT0 + 20);
  CHECK(h[1].value == "v20");
  CHECK(h[2].value == "v15");
  CHECK(h[3].value == "v10");
  HistoryOptions with_tombstones;
  with_tombstones.include_tombstones = true;
  h = history_or_fail(r, "k", with_tombstones);
  REQUIRE(h.size() == 5);
  CHECK(h[0].tombstone);
  CHECK(h[0].timestamp == kT0 + 30);
  CHECK(h[0].value.empty());
  HistoryOptions limited;
  limited.limit = 2;
  CHECK(history_or_fail(r, "k", limited).size() == 2);
  require_ok(tree.close());
}

TEST_CASE("commit timestamps never go back: clock steps, flushes and restarts", "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(versioned(p));
    commit_at(tree, *p, kT0 + 100, [](Transaction& tx) { require_ok(tx.set("a", "1")); });
    // The clock steps back: the commit is stamped just after the previous one.
    commit_at(tree, *p, kT0 + 5, [](Transaction& tx) { require_ok(tx.set("a", "2")); });
    require_ok(tree.flush().wait());  // the manifest now carries the newest commit timestamp
    commit_at(tree, *p, kT0 + 7,
              [](Transaction& tx) { require_ok(tx.set("a", "3")); });  // WAL only
    require_ok(tree.close());
  }
  // Reopened with the clock far behind: commits continue above everything recorded.
  Tree tree = open_or_fail(versioned(p));
  commit_at(tree, *p, kT0 + 1, [](Transaction& tx) { require_ok(tx.set("a", "4")); });
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  std::vector<KeyVersion> h = history_or_fail(r, "a");
  REQUIRE(h.size() == 4);
  CHECK(h[0].value == "4");
  CHECK(h[0].timestamp == kT0 + 103);
  CHECK(h[1].timestamp == kT0 + 102);
  CHECK(h[2].timestamp == kT0 + 101);
  CHECK(h[3].timestamp == kT0 + 100);
  // The iterator shows the same timestamps as history().
  auto it = r.range("", "");
  REQUIRE(it.ok());
  REQUIRE(it->seek_first());
  CHECK(it->timestamp() == kT0 + 103);
  require_ok(tree.close());

  // Same across a reopen whose WAL holds the newest commit and whose manifest does not.
  Tree again = open_or_fail(versioned(p));
  commit_at(again, *p, 1, [](Transaction& tx) { require_ok(tx.set("a", "5")); });
  Transaction r2 = begin_or_fail(again, Mode::ReadOnly);
  CHECK(history_or_fail(r2, "a").front().timestamp == kT0 + 104);
  require_ok(again.close());
}

TEST_CASE("versioned reads respect the transaction's snapshot and ignore its own writes",
          "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(versioned(p));
  commit_at(tree, *p, kT0 + 10, [](Transaction& tx) { require_ok(tx.set("k", "old")); });
  Transaction reader = begin_or_fail(tree);
  // Committed after the reader's snapshot, stamped before it: never seen by the reader.
  commit_at(tree, *p, kT0 + 20,
            [](Transaction& tx) { require_ok(tx.set_at("k", "backdated", kT0 + 5)); });
  commit_at(tree, *p, kT0 + 30, [](Transaction& tx) { require_ok(tx.set("j", "new")); });
  CHECK_FALSE(get_at_or_fail(reader, "k", kT0 + 7).has_value());
  CHECK(history_or_fail(reader, "k").size() == 1);
  auto it = reader.range_at("", "", kMaxTimestamp);
  REQUIRE(it.ok());
  REQUIRE(it->seek_first());
  CHECK(it->key() == "k");
  CHECK_FALSE(it->next());
  require_ok(it->status());
  // The reader's own uncommitted write is not a version yet.
  require_ok(reader.set_at("k", "mine", kT0 + 8));
  CHECK_FALSE(get_at_or_fail(reader, "k", kT0 + 9).has_value());
  CHECK(get_or_fail(reader, "k") == "mine");  // plain reads see own writes, as always
  require_ok(reader.rollback());

  Transaction now = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_at_or_fail(now, "k", kT0 + 7) == "backdated");
  require_ok(tree.close());
}

TEST_CASE("a transaction holds one write per key: the last set, set_at or del decides",
          "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(versioned(p));
  commit_at(tree, *p, kT0 + 100, [](Transaction& tx) {
    require_ok(tx.set("a", "plain"));
    require_ok(tx.set_at("a", "at-50", kT0 + 50));  // replaces the set, timestamp included
    require_ok(tx.set_at("b", "at-60", kT0 + 60));
    require_ok(tx.set("b", "plain-b"));  // replaces the set_at: stamped with the commit's time
  });
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  std::vector<KeyVersion> a = history_or_fail(r, "a");
  REQUIRE(a.size() == 1);
  CHECK(a[0].value == "at-50");
  CHECK(a[0].timestamp == kT0 + 50);
  std::vector<KeyVersion> b = history_or_fail(r, "b");
  REQUIRE(b.size() == 1);
  CHECK(b[0].value == "plain-b");
  CHECK(b[0].timestamp == kT0 + 100);
  require_ok(tree.close());
}

TEST_CASE("versioned reads match a model through flushes, compactions and reopens, both ways",
          "[versioning]") {
  const uint64_t seed = GENERATE(1, 2, 3);
  INFO("seed " << seed);
  Rng rng(seed);
  auto p = std::make_shared<MemoryPlatform>();
  VersionModel model;
  std::optional<Tree> tree(open_or_fail(versioned(p)));
  uint64_t clock = kT0;
  uint64_t last_ts = 0;
  for (int step = 0; step < 600; ++step) {
    const std::string key = "key" + std::to_string(rng.uniform(40));
    // The clock mostly moves on, sometimes steps back.
    clock = rng.uniform(10) == 0 ? clock - rng.uniform(50) : clock + 1 + rng.uniform(20);
    const uint64_t commit_ts = std::max(clock, last_ts + 1);
    ModelVersion v;
    const int op = static_cast<int>(rng.uniform(10));
    std::string value = "v" + std::to_string(step) + std::string(rng.uniform(200), 'x');
    if (op < 5) {
      v.ts = commit_ts;
      v.value = value;
      v.seq = commit_at(*tree, *p, clock, [&](Transaction& tx) { require_ok(tx.set(key, value)); });
    } else if (op < 8) {
      v.ts = kT0 + rng.uniform(clock - kT0 + 100);  // past or a little ahead
      v.value = value;
      v.seq = commit_at(*tree, *p, clock,
                        [&](Transaction& tx) { require_ok(tx.set_at(key, value, v.ts)); });
    } else if (op < 9) {
      v.ts = commit_ts;
      v.tombstone = true;
      v.seq = commit_at(*tree, *p, clock, [&](Transaction& tx) { require_ok(tx.del(key)); });
    } else {
      v.ts = kT0 + rng.uniform(clock - kT0 + 100);  // a delete stamped in the past
      v.tombstone = true;
      v.seq =
          commit_at(*tree, *p, clock, [&](Transaction& tx) { require_ok(tx.del_at(key, v.ts)); });
    }
    last_ts = commit_ts;
    model.add(key, v);
    if (step % 150 == 149) require_ok(tree->compact_all());
    if (step % 200 == 199) {
      require_ok(tree->close());
      tree.reset();
      tree.emplace(open_or_fail(TreeBuilder(small_tree(p))));  // versioning as stored
      CHECK(tree->versioning().enabled);
    }
  }
  Transaction r = begin_or_fail(*tree, Mode::ReadOnly);
  const uint64_t snap = tree->stats().last_sequence;
  for (const std::string& key : model.keys()) {
    check_history(r, model, key, snap, false);
    check_history(r, model, key, snap, true);
    for (int i = 0; i < 5; ++i) {
      const uint64_t ts = kT0 + rng.uniform(clock - kT0 + 200);
      CHECK(get_at_or_fail(r, key, ts) == model.get_at(key, ts, snap));
    }
  }
  for (int i = 0; i < 6; ++i) check_range_at(r, model, kT0 + rng.uniform(clock - kT0 + 200), snap);
  check_range_at(r, model, kMaxTimestamp, snap);

  // A history iterator over a range walks every version both ways.
  HistoryOptions o;
  o.include_tombstones = true;
  auto hr = r.history_range("key1", "key3", o);
  REQUIRE(hr.ok());
  std::vector<std::pair<std::string, uint64_t>> fwd, bwd;
  for (hr->seek_first(); hr->valid(); hr->next()) fwd.emplace_back(hr->key(), hr->timestamp());
  require_ok(hr->status());
  for (hr->seek_last(); hr->valid(); hr->prev()) bwd.emplace_back(hr->key(), hr->timestamp());
  require_ok(hr->status());
  std::reverse(bwd.begin(), bwd.end());
  std::vector<std::pair<std::string, uint64_t>> want;
  for (const std::string& key : model.keys()) {
    if (key < "key1" || key >= "key3") continue;
    for (const auto& v : model.history(key, snap, true)) want.emplace_back(key, v.ts);
  }
  CHECK(fwd == want);
  CHECK(bwd == want);
  require_ok(tree->close());
}

TEST_CASE("retention: compaction keeps the window exact and drops what is older", "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  const uint64_t retention = 1000;
  Tree tree = open_or_fail(versioned(p, retention));
  for (int i = 0; i < 10; ++i) {
    commit_at(tree, *p, kT0 + 100 * static_cast<uint64_t>(i), [&](Transaction& tx) {
      require_ok(tx.set("k", "v" + std::to_string(i)));
      require_ok(tx.set("gone", "g" + std::to_string(i)));
    });
  }
  commit_at(tree, *p, kT0 + 950, [](Transaction& tx) { require_ok(tx.del("gone")); });
  // Versions at 0..900 and the tombstone at 950. With the clock at 1650 the cutoff is 650:
  // kept are 700, 800, 900 and the newest at or before 650, which is 600.
  p->fake_clock().set_nanos(kT0 + 1650);
  require_ok(tree.compact_all());
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  std::vector<KeyVersion> h = history_or_fail(r, "k");
  REQUIRE(h.size() == 4);
  CHECK(h[0].timestamp == kT0 + 900);
  CHECK(h[3].timestamp == kT0 + 600);
  for (uint64_t t = 650; t <= 1000; t += 25) {
    INFO("t " << t);
    CHECK(get_at_or_fail(r, "k", kT0 + t) ==
          "v" + std::to_string(std::min<uint64_t>(t, 900) / 100));
  }
  CHECK(history_or_fail(r, "gone").size() == 4);  // 600..900; the tombstone is inside the window
  // Once the tombstone falls behind the cutoff, it alone stays: the newest version at or before
  // the cutoff (an older version written later with set_at must stay hidden behind it).
  p->fake_clock().set_nanos(kT0 + 5000);
  require_ok(tree.compact_all());
  Transaction r2 = begin_or_fail(tree, Mode::ReadOnly);
  HistoryOptions all;
  all.include_tombstones = true;
  std::vector<KeyVersion> gone = history_or_fail(r2, "gone", all);
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].tombstone);
  CHECK(history_or_fail(r2, "gone").empty());
  CHECK_FALSE(get_at_or_fail(r2, "gone", kT0 + 4000).has_value());
  h = history_or_fail(r2, "k");
  REQUIRE(h.size() == 1);  // the newest at or before the cutoff
  CHECK(h[0].value == "v9");
  require_ok(tree.close());
}

TEST_CASE("retention 0 keeps every version for ever, unversioned trees keep only the newest",
          "[versioning]") {
  for (bool is_versioned : {true, false}) {
    INFO("versioned " << is_versioned);
    auto p = std::make_shared<MemoryPlatform>();
    TreeBuilder b = small_tree(p);
    if (is_versioned) b.with_versioning(true, 0);
    Tree tree = open_or_fail(b);
    for (int i = 0; i < 20; ++i) {
      commit_at(tree, *p, kT0 + static_cast<uint64_t>(i),
                [&](Transaction& tx) { require_ok(tx.set("k", "v" + std::to_string(i))); });
    }
    p->fake_clock().set_nanos(kT0 + 1'000'000 * kSecond);
    require_ok(tree.compact_all());
    Transaction r = begin_or_fail(tree, Mode::ReadOnly);
    if (is_versioned) {
      CHECK(history_or_fail(r, "k").size() == 20);
      CHECK(get_at_or_fail(r, "k", kT0 + 3) == "v3");
    } else {
      CHECK(r.history("k").status().code() == Code::NotSupported);
      CHECK(tree.stats().bytes_per_level[0] + tree.stats().bytes_per_level[1] +
                tree.stats().bytes_per_level[2] + tree.stats().bytes_per_level[3] +
                tree.stats().bytes_per_level[4] + tree.stats().bytes_per_level[5] +
                tree.stats().bytes_per_level[6] >
            0);
    }
    CHECK(get_or_fail(r, "k") == "v19");
    require_ok(tree.close());
  }
}

TEST_CASE("the database stores whether it is versioned, and contradicting opens are refused",
          "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(versioned(p, 5 * kSecond));
    commit_at(tree, *p, kT0, [](Transaction& tx) { require_ok(tx.set("k", "v")); });
    require_ok(tree.close());
  }
  auto refused = TreeBuilder(small_tree(p)).with_versioning(false, 0).build();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Code::InvalidArgument);
  CHECK(refused.status().message().find("versioned") != std::string::npos);
  {
    // Without the option it opens as stored; a new retention is recorded.
    Tree tree = open_or_fail(small_tree(p));
    CHECK(tree.versioning() == Versioning{true, 5 * kSecond});
    require_ok(tree.close());
    Tree longer = open_or_fail(versioned(p, 60 * kSecond));
    CHECK(longer.versioning() == Versioning{true, 60 * kSecond});
    require_ok(longer.close());
    Tree stored = open_or_fail(small_tree(p));
    CHECK(stored.versioning() == Versioning{true, 60 * kSecond});
    Transaction r = begin_or_fail(stored, Mode::ReadOnly);
    CHECK(get_at_or_fail(r, "k", kT0) == "v");
    require_ok(stored.close());
  }
  // An unversioned database cannot become versioned.
  auto q = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(small_tree(q));
    require_ok(tree.set("k", "v"));
    require_ok(tree.close());
  }
  auto turned_on = versioned(q).build();
  REQUIRE_FALSE(turned_on.ok());
  CHECK(turned_on.status().code() == Code::InvalidArgument);
  Tree plain = open_or_fail(small_tree(q));
  CHECK_FALSE(plain.versioning().enabled);
  require_ok(plain.close());
}

TEST_CASE("versioned calls: named errors for bad input, and nothing changes", "[versioning]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree plain = open_or_fail(small_tree(p, "plain"));
    Transaction tx = begin_or_fail(plain);
    CHECK(tx.set_at("k", "v", kT0).code() == Code::NotSupported);
    CHECK(tx.del_at("k", kT0).code() == Code::NotSupported);
    CHECK(tx.get_at("k", kT0).status().code() == Code::NotSupported);
    CHECK(tx.history("k").status().code() == Code::NotSupported);
    CHECK(tx.range_at("", "", kT0).status().code() == Code::NotSupported);
    CHECK(tx.keys_at("", "", kT0).status().code() == Code::NotSupported);
    CHECK(tx.history_range("", "").status().code() == Code::NotSupported);
    require_ok(tx.commit().wait());
    CHECK_FALSE(read_all(plain).count("k"));
    require_ok(plain.close());
  }
  Tree tree = open_or_fail(versioned(p));
  Transaction tx = begin_or_fail(tree);
  CHECK(tx.set_at("k", "v", kMaxTimestamp + 1).code() == Code::InvalidArgument);
  CHECK(tx.set_at("k", "v", 0).code() == Code::InvalidArgument);
  CHECK(tx.del_at("k", 0).code() == Code::InvalidArgument);
  CHECK(tx.del_at("k", kMaxTimestamp + 1).code() == Code::InvalidArgument);
  CHECK(tx.del_at("", kT0).code() == Code::InvalidArgument);
  CHECK(tx.set_at("", "v", kT0).code() == Code::InvalidArgument);
  CHECK(tx.set_at("k", std::string(kMaxValueSize + 1, 'v'), kT0).code() == Code::InvalidArgument);
  CHECK(tx.get_at("k", kMaxTimestamp + 1).status().code() == Code::InvalidArgument);
  CHECK(tx.get_at("", kT0).status().code() == Code::InvalidArgument);
  CHECK(tx.history("").status().code() == Code::InvalidArgument);
  CHECK(tx.range_at("b", "a", kT0).status().code() == Code::InvalidArgument);
  CHECK(tx.range_at("", "", kMaxTimestamp + 1).status().code() == Code::InvalidArgument);
  require_ok(tx.set_at("k", "v", kMaxTimestamp));  // the largest is fine
  require_ok(tx.commit().wait());
  Transaction ro = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(ro.set_at("k", "w", kT0).code() == Code::ReadOnly);
  CHECK(ro.del_at("k", kT0).code() == Code::ReadOnly);
  std::vector<KeyVersion> h = history_or_fail(ro, "k");
  REQUIRE(h.size() == 1);
  CHECK(h[0].timestamp == kMaxTimestamp);
  Transaction wo = begin_or_fail(tree, Mode::WriteOnly);
  CHECK(wo.get_at("k", kT0).status().code() == Code::InvalidArgument);
  require_ok(tree.close());
  CHECK(tx.get_at("k", kT0).status().code() == Code::Closed);
}

TEST_CASE("retention with writes out of time order and open snapshots matches the model",
          "[versioning]") {
  const uint64_t seed = GENERATE(11, 12, 13, 14);
  INFO("seed " << seed);
  Rng rng(seed);
  auto p = std::make_shared<MemoryPlatform>();
  const uint64_t retention = 400;
  Tree tree = open_or_fail(versioned(p, retention));
  VersionModel model;
  // Plain reads answer the newest write by commit order.
  std::map<std::string, std::optional<std::string>> newest;
  uint64_t clock = kT0;
  struct Held {
    Transaction tx;
    uint64_t snapshot;
    std::map<std::string, std::optional<std::string>> newest;
  };
  std::vector<Held> held;
  for (int step = 0; step < 800; ++step) {
    const std::string key = "key" + std::to_string(rng.uniform(12));
    // Never behind what the tree read from the clock (each reading advances it).
    clock = std::max(clock, p->fake_clock().peek_nanos()) + 1 + rng.uniform(10);
    ModelVersion v;
    v.value = "v" + std::to_string(step);
    const int op = static_cast<int>(rng.uniform(10));
    if (op < 4) {
      v.ts = clock;
      v.seq =
          commit_at(tree, *p, clock, [&](Transaction& tx) { require_ok(tx.set(key, v.value)); });
    } else if (op < 7) {
      v.ts = clock - 600 + rng.uniform(800);  // behind the window, inside it, or ahead
      v.seq = commit_at(tree, *p, clock,
                        [&](Transaction& tx) { require_ok(tx.set_at(key, v.value, v.ts)); });
    } else {
      v.ts = clock;
      v.tombstone = true;
      v.value.clear();
      v.seq = commit_at(tree, *p, clock, [&](Transaction& tx) { require_ok(tx.del(key)); });
    }
    model.add(key, v);
    newest[key] = v.tombstone ? std::nullopt : std::optional<std::string>(v.value);
    if (rng.one_in(100) && held.size() < 3) {
      held.push_back(Held{begin_or_fail(tree, Mode::ReadOnly), tree.stats().last_sequence, newest});
    }
    if (step % 100 == 99) {
      p->fake_clock().set_nanos(clock);
      require_ok(tree.compact_all());
    }
  }
  clock = std::max(clock, p->fake_clock().peek_nanos());
  p->fake_clock().set_nanos(clock);
  require_ok(tree.compact_all());
  // Every compaction's cutoff was at or before the clock (which each reading advances) minus the
  // retention: from there on reads are exact.
  const uint64_t from = p->fake_clock().peek_nanos() - retention;
  held.push_back(Held{begin_or_fail(tree, Mode::ReadOnly), tree.stats().last_sequence, newest});
  for (const Held& h : held) {
    INFO("snapshot " << h.snapshot);
    for (const std::string& key : model.keys()) {
      INFO(key);
      auto it = h.newest.find(key);
      CHECK(get_or_fail(h.tx, key) == (it == h.newest.end() ? std::nullopt : it->second));
      for (uint64_t t = from; t <= clock + 250; t += 1 + rng.uniform(40)) {
        INFO("t " << t);
        CHECK(get_at_or_fail(h.tx, key, t) == model.get_at(key, t, h.snapshot));
      }
      // Every version inside the window is still there.
      std::vector<KeyVersion> got = history_or_fail(h.tx, key);
      size_t in_window = 0;
      for (const auto& v : model.history(key, h.snapshot, false)) in_window += v.ts > from;
      size_t got_in_window = 0;
      for (const auto& v : got) got_in_window += v.timestamp > from;
      CHECK(got_in_window == in_window);
    }
  }
  require_ok(tree.close());
}
