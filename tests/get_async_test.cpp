// skv-test-modules: util wal memtable sstable version engine memory
// Transaction::get_async against get on random data (natively and in the wasm32 build, where the
// read runs when the queue is pumped, as the browser does): the same answers for keys in
// memtables, in tables on several levels, deleted, never written and written by the transaction
// itself; the read keeps its snapshot after the transaction is gone; argument errors and a
// closed tree answer at once.

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

using Answer = Result<std::optional<std::string>>;

std::string key_of(uint64_t i) { return "key-" + std::to_string(i % 3000); }

// Runs queued work until `f` completes (the memory platform's executor runs nothing by itself).
Answer await_answer(MemoryPlatform& p, const Future<Answer>& f) {
  while (!f.ready()) REQUIRE(p.queue_executor()->run_pending(1) == 1);
  return f.wait();
}

void same(const Answer& got, const Answer& want, const std::string& key) {
  INFO(key << ": async " << got.status().to_string() << ", sync " << want.status().to_string());
  REQUIRE(got.ok() == want.ok());
  if (!got.ok()) {
    CHECK(got.status().code() == want.status().code());
    return;
  }
  CHECK(got->has_value() == want->has_value());
  if (got->has_value() && want->has_value()) CHECK(**got == **want);
}

}  // namespace

TEST_CASE("get_async answers what get answers, on random data across memtables and levels") {
  auto platform = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(small_tree(platform));
  Rng rng(0x6a5c);
  Model model;
  for (int i = 0; i < 6000; ++i) {
    const std::string k = key_of(rng.next());
    if (rng.one_in(5)) {
      require_ok(tree.del(k));
      model.erase(k);
    } else {
      const std::string v = "v" + std::to_string(rng.next()) + std::string(rng.uniform(200), 'x');
      require_ok(tree.set(k, v));
      model[k] = v;
    }
    if (i % 1500 == 0) platform->queue_executor()->run_all(1000);  // flushes, compactions
  }
  REQUIRE(tree.stats().level_count > 0);
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  size_t found = 0;
  for (uint64_t i = 0; i < 3100; ++i) {  // every key, and 100 never written
    const std::string k = "key-" + std::to_string(i);
    const Answer got = await_answer(*platform, tx.get_async(k));
    same(got, tx.get(k), k);
    REQUIRE(got.ok());
    auto it = model.find(k);
    CHECK(got->has_value() == (it != model.end()));
    if (got->has_value() && it != model.end()) {
      CHECK(**got == it->second);
      ++found;
    }
  }
  CHECK(found == model.size());
  require_ok(tx.rollback());
  require_ok(tree.close());
}

TEST_CASE("get_async sees the transaction's own writes and its snapshot, also once it is gone") {
  auto platform = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(small_tree(platform));
  require_ok(tree.set("a", "old"));
  require_ok(tree.set("b", "kept"));

  Result<Transaction> tx = tree.begin();
  REQUIRE(tx.ok());
  require_ok(tx->set("mine", "buffered"));
  require_ok(tx->del("b"));
  // The transaction's own writes answer at once.
  Future<Answer> mine = tx->get_async("mine");
  CHECK(mine.ready());
  CHECK(mine.wait()->value_or("") == "buffered");
  Future<Answer> deleted = tx->get_async("b");
  CHECK(deleted.ready());
  CHECK(!deleted.wait()->has_value());

  // A read queued before the transaction ends, then newer commits and compaction: it answers
  // from the snapshot.
  Future<Answer> a = tx->get_async("a");
  CHECK(!a.ready());
  require_ok(tx->rollback());
  { Transaction gone = std::move(tx).value(); }
  require_ok(tree.set("a", "new"));
  require_ok(tree.compact_all());
  CHECK(await_answer(*platform, a)->value_or("") == "old");

  // Argument errors answer at once.
  Transaction t2 = begin_or_fail(tree);
  Future<Answer> empty = t2.get_async("");
  REQUIRE(empty.ready());
  CHECK(empty.wait().status().code() == Code::InvalidArgument);
  Future<Answer> huge = t2.get_async(std::string(kMaxKeySize + 1, 'k'));
  REQUIRE(huge.ready());
  CHECK(huge.wait().status().code() == Code::InvalidArgument);

  // A read queued before close() answers Closed; one asked after it answers Closed at once.
  Future<Answer> queued = t2.get_async("a");
  require_ok(tree.close());
  platform->queue_executor()->run_all(100);
  REQUIRE(queued.ready());
  CHECK(queued.wait().status().code() == Code::Closed);
  Future<Answer> after = t2.get_async("a");
  REQUIRE(after.ready());
  CHECK(after.wait().status().code() == Code::Closed);
}
