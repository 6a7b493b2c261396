// skv-test-modules: util wal memtable sstable version engine memory
// Crash consistency on the in-memory platform: a simulated power failure drops every byte not
// yet synced (optionally tearing the last unsynced write at a random byte), then the tree is
// reopened. Every commit acknowledged as Immediate must be there, and what is visible must be a
// prefix of the commit order. Also: damage in the middle of the WAL or in a table is reported as
// corruption naming the file, never skipped.

#include <cstdio>
#include <string>
#include <vector>

#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

std::string commit_key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "c%06d", i);
  return buf;
}

// Commit i writes commit_key(i) and a few shared keys; returns the commits that are visible
// after reopening as a count n, after checking they are exactly commits 0..n-1.
int visible_prefix(const Tree& tree, int attempted) {
  Model all = read_all(tree);
  int n = 0;
  while (n < attempted && all.count(commit_key(n)) > 0) ++n;
  for (int i = n; i < attempted; ++i) {
    INFO("commit " << i << " is visible after a hole at " << n);
    REQUIRE(all.count(commit_key(i)) == 0);
  }
  if (n > 0) {
    // The shared key holds the value of the last visible commit.
    REQUIRE(all.count("last") == 1);
    CHECK(all["last"] == std::to_string(n - 1));
  }
  return n;
}

// Commits number *attempted: its key, and "last" set to it, with a value of up to `max_value`
// bytes, Immediate one time in `immediate_one_in` (then *durable_floor moves up to it).
void commit_next(Tree& tree, Rng& rng, uint64_t max_value, uint64_t immediate_one_in,
                 int* attempted, int* durable_floor) {
  Transaction tx = begin_or_fail(tree);
  const int i = *attempted;
  require_ok(tx.set(commit_key(i), std::string(rng.uniform(max_value), 'v')));
  require_ok(tx.set("last", std::to_string(i)));
  Durability d = rng.one_in(immediate_one_in) ? Durability::Immediate : Durability::Eventual;
  tx.set_durability(d);
  require_ok(tx.commit().wait());
  ++*attempted;
  if (d == Durability::Immediate) *durable_floor = *attempted;
}

}  // namespace

TEST_CASE("after a crash every Immediate commit is there and the visible commits are a prefix",
          "[tree][crash]") {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    Rng rng(seed);
    auto p = std::make_shared<MemoryPlatform>();
    int attempted = 0;
    int durable_floor = 0;  // commits 0..durable_floor-1 must survive
    int survived_before = 0;
    for (int life = 0; life < 3; ++life) {
      {
        Tree tree = open_or_fail(small_tree(p));
        const int before = visible_prefix(tree, attempted);
        REQUIRE(before >= durable_floor);
        REQUIRE(before >= survived_before);
        attempted = before;  // lost commits are forgotten; numbering continues from here
        survived_before = before;
        const int commits = 1 + static_cast<int>(rng.uniform(300));
        for (int c = 0; c < commits; ++c) {
          commit_next(tree, rng, /*max_value=*/200, /*immediate_one_in=*/4, &attempted,
                      &durable_floor);
          if (rng.one_in(10)) p->queue_executor()->run_pending(1 + rng.uniform(3));
        }
        p->crash(rng.next(), rng.one_in(2));
        // The tree's handles are dead now; closing it reports the crash, nothing more.
        (void)tree.close();
      }
    }
    Tree tree = open_or_fail(small_tree(p));
    REQUIRE(visible_prefix(tree, attempted) >= durable_floor);
  }
}

TEST_CASE("after a crash that leaves holes in the WAL the tree opens with every Immediate commit",
          "[tree][crash]") {
  // Unsynced pages written back out of order: a page that never reached the disk reads as zeros
  // while later ones hold records. Recovery stops at the first hole.
  int holes_met = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    Rng rng(seed);
    auto p = std::make_shared<MemoryPlatform>();
    int attempted = 0;
    int durable_floor = 0;
    for (int life = 0; life < 3; ++life) {
      Tree tree = open_or_fail(small_tree(p));
      const int before = visible_prefix(tree, attempted);
      REQUIRE(before >= durable_floor);
      if (before < attempted) ++holes_met;
      attempted = before;
      const int commits = 50 + static_cast<int>(rng.uniform(300));
      for (int c = 0; c < commits; ++c) {
        commit_next(tree, rng, /*max_value=*/300, /*immediate_one_in=*/20, &attempted,
                    &durable_floor);
      }
      p->crash_with_holes(rng.next());
      (void)tree.close();
    }
    Tree tree = open_or_fail(small_tree(p));
    const int n = visible_prefix(tree, attempted);
    REQUIRE(n >= durable_floor);
    if (n < attempted) ++holes_met;
    Result<VerifyReport> report = tree.verify();
    REQUIRE(report.ok());
    CHECK(report->ok());
  }
  CHECK(holes_met > 0);  // the crashes did cut commits short
}

TEST_CASE("a torn WAL tail is dropped, the rest replays", "[tree][crash]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(small_tree(p));
    for (int i = 0; i < 10; ++i) {
      Transaction tx = begin_or_fail(tree);
      require_ok(tx.set(commit_key(i), "v"));
      require_ok(tx.set("last", std::to_string(i)));
      tx.set_durability(i < 9 ? Durability::Immediate : Durability::Eventual);
      require_ok(tx.commit().wait());
    }
    // Commit 9 is unsynced: tear it at some byte.
    p->crash(7, true);
  }
  Tree tree = open_or_fail(small_tree(p));
  const int n = visible_prefix(tree, 10);
  CHECK(n >= 9);
}

TEST_CASE("a damaged byte in the middle of the WAL is a corruption error naming the file",
          "[tree][crash][errors]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(small_tree(p).with_memtable_size(1 << 20));
    for (int i = 0; i < 50; ++i) {
      Transaction tx = begin_or_fail(tree);
      require_ok(tx.set(commit_key(i), std::string(100, 'v')));
      tx.set_durability(Durability::Immediate);
      require_ok(tx.commit().wait());
    }
    require_ok(tree.close());
  }
  Result<std::vector<MemoryFileInfo>> files = p->list_files("db");
  REQUIRE(files.ok());
  std::string wal;
  uint64_t size = 0;
  for (const MemoryFileInfo& f : *files) {
    if (f.name.size() > 4 && f.name.substr(f.name.size() - 4) == ".wal" && f.size > size) {
      wal = f.name;
      size = f.size;
    }
  }
  REQUIRE_FALSE(wal.empty());
  require_ok(p->flip_byte("db", wal, size / 3));
  Result<Tree> t = small_tree(p).with_memtable_size(1 << 20).build();
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == Code::Corruption);
  CHECK(t.status().message().find(wal) != std::string::npos);
  CHECK(t.status().message().find("offset") != std::string::npos);
}

TEST_CASE("a damaged table is reported, never skipped", "[tree][crash][errors]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(small_tree(p).with_compression(Compression::None));
    Transaction tx = begin_or_fail(tree);
    for (int i = 0; i < 200; ++i) require_ok(tx.set(commit_key(i), std::string(50, 'v')));
    require_ok(tx.commit().wait());
    require_ok(tree.flush().wait());
    require_ok(tree.close());
  }
  Result<std::vector<MemoryFileInfo>> files = p->list_files("db");
  REQUIRE(files.ok());
  std::string sst;
  for (const MemoryFileInfo& f : *files) {
    if (f.name.size() > 4 && f.name.substr(f.name.size() - 4) == ".sst") sst = f.name;
  }
  REQUIRE_FALSE(sst.empty());
  // A byte inside the first data block (after the 64-byte file header).
  require_ok(p->flip_byte("db", sst, 100));
  Result<Tree> t = small_tree(p).with_compression(Compression::None).build();
  if (!t.ok()) {
    CHECK(t.status().code() == Code::Corruption);
    CHECK(t.status().message().find(sst) != std::string::npos);
    return;
  }
  Transaction r = begin_or_fail(*t, Mode::ReadOnly);
  Result<Iterator> it = r.range("", "");
  REQUIRE(it.ok());
  for (it->seek_first(); it->valid(); it->next()) {
  }
  Status s = it->status();
  CHECK(s.code() == Code::Corruption);
  CHECK(s.message().find(sst) != std::string::npos);
  Result<std::optional<std::string>> g = r.get(commit_key(0));
  CHECK(g.status().code() == Code::Corruption);
}

TEST_CASE("a missing or truncated table is an error naming it", "[tree][crash][errors]") {
  const bool truncate = GENERATE(false, true);
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(small_tree(p));
    Transaction tx = begin_or_fail(tree);
    for (int i = 0; i < 300; ++i) require_ok(tx.set(commit_key(i), std::string(40, 'v')));
    require_ok(tx.commit().wait());
    require_ok(tree.flush().wait());
    require_ok(tree.close());
  }
  Result<std::vector<MemoryFileInfo>> files = p->list_files("db");
  REQUIRE(files.ok());
  std::string sst;
  uint64_t size = 0;
  for (const MemoryFileInfo& f : *files) {
    if (f.name.size() > 4 && f.name.substr(f.name.size() - 4) == ".sst") {
      sst = f.name;
      size = f.size;
    }
  }
  REQUIRE_FALSE(sst.empty());
  if (truncate) {
    require_ok(p->truncate_file("db", sst, size / 2));
  } else {
    Result<std::unique_ptr<Storage>> storage =
        p->open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}});
    REQUIRE(storage.ok());
    require_ok((*storage)->objects().remove(sst));
    require_ok((*storage)->sync_dir());
  }
  Result<Tree> t = small_tree(p).build();
  if (!truncate || !t.ok()) {
    // A missing table is found at open (the manifest names it).
    REQUIRE_FALSE(t.ok());
    INFO(t.status().to_string());
    CHECK(t.status().code() == Code::Corruption);
    CHECK(t.status().message().find(sst) != std::string::npos);
    return;
  }
  // A truncated one is found when it is first read (its footer is gone).
  Transaction r = begin_or_fail(*t, Mode::ReadOnly);
  Result<std::optional<std::string>> g = r.get(commit_key(7));
  INFO(g.status().to_string());
  CHECK(g.status().code() == Code::Corruption);
  CHECK(g.status().message().find(sst) != std::string::npos);
}

TEST_CASE("manifests CURRENT does not name are removed at open", "[tree][crash]") {
  auto p = std::make_shared<MemoryPlatform>();
  {
    Tree tree = open_or_fail(small_tree(p));
    Transaction tx = begin_or_fail(tree);
    require_ok(tx.set("k", "v"));
    require_ok(tx.commit().wait());
    require_ok(tree.close());
  }
  {
    // What a crash between writing a new manifest and updating CURRENT leaves behind.
    Result<std::unique_ptr<Storage>> storage =
        p->open_storage("db", StorageOptions{.create_if_missing = false, .marker = {}});
    REQUIRE(storage.ok());
    Result<std::unique_ptr<LogFile>> f = (*storage)->logs().create("MANIFEST-000999");
    REQUIRE(f.ok());
    require_ok((*f)->append("not a manifest anyone names"));
    require_ok((*f)->sync());
    require_ok((*storage)->sync_dir());
  }
  Tree tree = open_or_fail(small_tree(p));
  Result<std::vector<MemoryFileInfo>> files = p->list_files("db");
  REQUIRE(files.ok());
  int manifests = 0;
  for (const MemoryFileInfo& f : *files) {
    CHECK(f.name != "MANIFEST-000999");
    if (f.name.rfind("MANIFEST-", 0) == 0) ++manifests;
  }
  CHECK(manifests == 1);
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "k") == "v");
}
