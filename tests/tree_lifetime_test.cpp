// skv-test-modules: engine memory native
// skv-test-wasm: off
// What may outlive a tree, and close() racing everything else: iterators used after close() or
// after the last handle is gone report Closed and read nothing freed; reads on other threads
// racing close() get their data or Closed; close() during compact_all() on another thread waits
// for it or stops it, and the database reopens whole. Meant to run under ASan/UBSan too (the
// sanitizer job of tools/test.sh), where a use after free fails the test outright.

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "native/thread_pool_executor.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key%06d", i);
  return buf;
}

// A tree whose data sits in many small blocks of several tables, so that moving an iterator
// keeps reaching into the table and block caches.
TreeBuilder tables_tree(std::shared_ptr<Platform> p) {
  TreeBuilder b = small_tree(std::move(p));
  b.with_block_size(256).with_compression(Compression::None).with_l0_compaction_trigger(16);
  return b;
}

void fill(const Tree& tree, int n, size_t value_size = 100) {
  for (int i = 0; i < n; i += 100) {
    Transaction tx = begin_or_fail(tree);
    for (int j = i; j < i + 100 && j < n; ++j) {
      require_ok(tx.set(key_of(j), std::string(value_size, static_cast<char>('a' + j % 26))));
    }
    require_ok(tx.commit().wait());
  }
  require_ok(tree.flush().wait());
}

bool ok_or_closed(const Status& s) { return s.ok() || s.code() == Code::Closed; }

}  // namespace

TEST_CASE("an iterator used after close() reports Closed and reads nothing", "[lifetime]") {
  auto p = std::make_shared<MemoryPlatform>();
  std::optional<Tree> tree(open_or_fail(tables_tree(p)));
  fill(*tree, 3000);
  REQUIRE(tree->stats().files_per_level[0] > 1);
  Transaction tx = begin_or_fail(*tree, Mode::ReadOnly);
  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  REQUIRE(it->seek_first());
  for (int i = 0; i < 10; ++i) REQUIRE(it->next());

  SECTION("close() by a handle") { require_ok(tree->close()); }
  SECTION("the last handle dropped") { tree.reset(); }
  CHECK_FALSE(it->next());
  CHECK_FALSE(it->valid());
  CHECK(it->status().code() == Code::Closed);
  CHECK_FALSE(it->seek_first());
  CHECK_FALSE(it->seek_last());
  CHECK_FALSE(it->seek(key_of(2500)));
  CHECK(it->status().code() == Code::Closed);
  // The transaction outlived the tree too: it refuses everything, and a new iterator.
  CHECK(tx.get(key_of(1)).status().code() == Code::Closed);
  CHECK(tx.range("", "").status().code() == Code::Closed);
  // Destroying them now (after the tree) must not touch freed memory either.
}

TEST_CASE("reads on other threads racing close() get their data or Closed", "[lifetime][race]") {
  for (int round = 0; round < 8; ++round) {
    auto p = std::make_shared<MemoryPlatform>(std::make_shared<ThreadPoolExecutor>(2));
    Tree tree = open_or_fail(tables_tree(p));
    fill(tree, 2000);
    std::atomic<bool> go{false};
    std::atomic<int> bad{0}, reads{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t) {
      readers.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        for (int n = 0;; ++n) {
          Result<Transaction> tx = tree.begin_with_mode(Mode::ReadOnly);
          if (!tx.ok()) {
            if (tx.status().code() != Code::Closed) bad.fetch_add(1);
            return;
          }
          if (t % 2 == 0) {
            Result<std::optional<std::string>> v = tx->get(key_of((n * 37 + t) % 2000));
            if (!ok_or_closed(v.status())) bad.fetch_add(1);
            if (v.ok() && !v->has_value()) bad.fetch_add(1);  // every key is there
          } else {
            Result<Iterator> it = tx->range(key_of(n % 1900), "");
            if (!ok_or_closed(it.status())) bad.fetch_add(1);
            if (!it.ok()) continue;
            int steps = 0;
            for (it->seek_first(); it->valid() && steps < 200; it->next()) ++steps;
            if (!ok_or_closed(it->status())) bad.fetch_add(1);
          }
          reads.fetch_add(1);
        }
      });
    }
    go = true;
    while (reads.load() < 50) std::this_thread::yield();
    require_ok(tree.close());
    for (auto& r : readers) r.join();
    CHECK(bad.load() == 0);
  }
}

TEST_CASE("close() during compact_all() on another thread waits for it or stops it",
          "[lifetime][race]") {
  auto p = std::make_shared<MemoryPlatform>(std::make_shared<ThreadPoolExecutor>(2));
  constexpr int kKeys = 12000;  // about 12 MiB of values: compact_all() takes several steps
  for (int round = 0; round < 3; ++round) {
    {
      Tree tree = open_or_fail(tables_tree(p).with_memtable_size(1 << 20));
      if (round == 0) fill(tree, kKeys, 1000);
      const uint64_t steps_before = tree.stats().compaction_steps;
      Status compacted = Status::io_error("not run");
      std::atomic<bool> done{false};
      std::thread compactor([&] {
        compacted = tree.compact_all();
        done = true;
      });
      // Close in the middle: once a first step of the manual compaction has run.
      while (tree.stats().compaction_steps == steps_before && !done.load()) {
        std::this_thread::yield();
      }
      require_ok(tree.close());
      compactor.join();
      INFO(compacted.to_string());
      CHECK(ok_or_closed(compacted));
    }
    Tree tree = open_or_fail(tables_tree(p));
    Transaction r = begin_or_fail(tree, Mode::ReadOnly);
    CHECK(r.count("", "").value_or(0) == static_cast<uint64_t>(kKeys));
    CHECK(get_or_fail(r, key_of(kKeys - 1)).has_value());
    require_ok(tree.close());
  }
}
