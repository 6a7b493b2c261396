// skv-test-modules: util wal memtable sstable version engine memory
// Tree iterators against a std::map model: random sets and deletes committed in transactions,
// with flushes, compactions and reopens in between, then random walks that seek, step both ways
// and switch direction, over random [start, end) ranges, with the transaction's own uncommitted
// writes layered on top. Every failure prints the seed that replays it.

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

std::string random_key(Rng& rng) {
  // A small key space so keys are overwritten and deleted often; some share long prefixes.
  const uint64_t n = rng.uniform(300);
  std::string k = "k" + std::to_string(n * 7919 % 1000);
  if (n % 3 == 0) k += std::string(1 + n % 5, static_cast<char>('a' + n % 26));
  if (n % 17 == 0) k.push_back('\0');
  return k;
}

std::string random_value(Rng& rng) {
  std::string v(rng.uniform(60), '\0');
  for (char& c : v) c = static_cast<char>('a' + rng.uniform(26));
  return v;
}

// Walks `it` (over [lo, hi) of `model`) randomly, comparing each position with the model.
void random_walk(Rng& rng, Iterator& it, const Model& model, const std::string& lo,
                 const std::string& hi) {
  std::vector<std::pair<std::string, std::string>> in_range;
  for (const auto& kv : model) {
    if ((lo.empty() || kv.first >= lo) && (hi.empty() || kv.first < hi)) in_range.push_back(kv);
  }
  const long n = static_cast<long>(in_range.size());
  long pos = -1;  // -1: not valid
  for (int step = 0; step < 200; ++step) {
    const uint64_t op = rng.uniform(10);
    if (op == 0) {
      moved(it.seek_first(), it);
      pos = n > 0 ? 0 : -1;
    } else if (op == 1) {
      moved(it.seek_last(), it);
      pos = n - 1;
    } else if (op == 2) {
      const std::string target = random_key(rng);
      moved(it.seek(target), it);
      auto lb = std::lower_bound(in_range.begin(), in_range.end(), target,
                                 [](const auto& kv, const std::string& t) { return kv.first < t; });
      pos = lb == in_range.end() ? -1 : static_cast<long>(lb - in_range.begin());
    } else if (op < 6) {
      if (!it.valid()) continue;
      moved(it.next(), it);
      pos = pos + 1 < n ? pos + 1 : -1;
    } else {
      if (!it.valid()) continue;
      moved(it.prev(), it);
      pos = pos - 1;
    }
    INFO("step " << step << " op " << op << " lo '" << lo << "' hi '" << hi << "'");
    if (pos < 0) {
      REQUIRE_FALSE(it.valid());
    } else {
      REQUIRE(it.valid());
      REQUIRE(it.key() == in_range[pos].first);
      Result<std::string_view> v = it.value();
      REQUIRE(v.ok());
      REQUIRE(*v == in_range[pos].second);
    }
  }
  require_ok(it.status());
}

std::string random_bound(Rng& rng) { return rng.one_in(3) ? std::string() : random_key(rng); }

}  // namespace

TEST_CASE("iterators match a std::map model across flushes, compactions and reopens",
          "[tree][model]") {
  const uint64_t seed = GENERATE(1, 2, 3, 4);
  INFO("seed " << seed);
  Rng rng(seed);
  auto p = std::make_shared<MemoryPlatform>();
  Model model;
  auto tree = std::make_unique<Tree>(open_or_fail(small_tree(p)));
  uint64_t flushes = 0;  // over every life of the tree

  for (int round = 0; round < 40; ++round) {
    // A batch of committed transactions.
    const int txs = 1 + static_cast<int>(rng.uniform(10));
    for (int t = 0; t < txs; ++t) {
      Transaction tx = begin_or_fail(*tree);
      const int ops = 1 + static_cast<int>(rng.uniform(20));
      for (int i = 0; i < ops; ++i) {
        const std::string k = random_key(rng);
        if (rng.one_in(4)) {
          require_ok(tx.del(k));
          model.erase(k);
        } else {
          const std::string v = random_value(rng);
          require_ok(tx.set(k, v));
          model[k] = v;
        }
      }
      require_ok(tx.commit().wait());
    }
    // Background work, sometimes all of it, sometimes part of it.
    p->queue_executor()->run_pending(rng.uniform(4));
    if (rng.one_in(8)) require_ok(tree->flush().wait());
    if (rng.one_in(15)) require_ok(tree->compact_all());
    if (rng.one_in(10)) {
      flushes += tree->stats().flushes;
      require_ok(tree->close());
      tree = std::make_unique<Tree>(open_or_fail(small_tree(p)));
    }

    // Committed state, over a random range.
    {
      Transaction r = begin_or_fail(*tree, Mode::ReadOnly);
      const std::string lo = random_bound(rng), hi = random_bound(rng);
      Result<Iterator> it = r.range(lo, hi);
      if (!lo.empty() && !hi.empty() && hi < lo) {
        CHECK(it.status().code() == Code::InvalidArgument);  // a reversed range is bad input
        continue;
      }
      REQUIRE(it.ok());
      random_walk(rng, *it, model, lo, hi);
    }
    // An open transaction's own writes layered over the snapshot.
    {
      Transaction tx = begin_or_fail(*tree);
      Model overlay = model;
      for (int i = 0; i < 15; ++i) {
        const std::string k = random_key(rng);
        if (rng.one_in(3)) {
          require_ok(tx.del(k));
          overlay.erase(k);
        } else {
          const std::string v = random_value(rng);
          require_ok(tx.set(k, v));
          overlay[k] = v;
        }
      }
      const std::string lo = random_bound(rng), hi = random_bound(rng);
      Result<Iterator> it = tx.range(lo, hi);
      if (!lo.empty() && !hi.empty() && hi < lo) {
        CHECK(it.status().code() == Code::InvalidArgument);
      } else {
        REQUIRE(it.ok());
        random_walk(rng, *it, overlay, lo, hi);
      }
      require_ok(tx.rollback());
    }
  }
  CHECK(read_all(*tree) == model);
  CHECK(flushes + tree->stats().flushes > 0);
  require_ok(tree->close());
  Tree reopened = open_or_fail(small_tree(p));
  CHECK(read_all(reopened) == model);
}
