// skv-test-modules: util wal memtable sstable version engine posix native
// skv-test-label: heavy
// skv-test-wasm: off
// One million keys through the whole engine on a real directory: written in transactions,
// flushed, compacted by the background and then fully, the tree closed and reopened, and every
// key and value verified by a full forward scan, a full backward scan and point reads.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr int kKeys = 1'000'000;
constexpr int kPerTransaction = 2'000;

std::string key_of(int i) {
  char buf[24];
  // Scatter the write order over the key space so flushes overlap and compactions merge.
  std::snprintf(buf, sizeof(buf), "key%010d", i);
  return buf;
}

std::string value_of(int i) {
  std::string v = "value-" + std::to_string(i) + "-";
  v.append(static_cast<size_t>(i % 41), static_cast<char>('a' + i % 26));
  return v;
}

// Writes keys in a scattered order: i -> (i * 7919) mod kKeys is a permutation (7919 is prime
// and does not divide 10^6).
int scattered(int i) { return static_cast<int>((static_cast<int64_t>(i) * 7919) % kKeys); }

}  // namespace

TEST_CASE("one million keys: write, flush, compact, reopen, verify everything", "[tree][bulk]") {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/skv-bulk-XXXXXX";
  REQUIRE(mkdtemp(dir.data()) != nullptr);
  INFO("dir " << dir);
  TreeBuilder builder;
  builder.with_path(dir)
      .with_memtable_size(8 << 20)
      .with_target_file_size(8 << 20)
      .with_level_base_bytes(32 << 20);
  {
    Tree tree = open_or_fail(builder);
    for (int first = 0; first < kKeys; first += kPerTransaction) {
      Transaction tx = begin_or_fail(tree, Mode::WriteOnly);
      for (int i = first; i < first + kPerTransaction; ++i) {
        const int k = scattered(i);
        require_ok(tx.set(key_of(k), value_of(k)));
      }
      require_ok(tx.commit().wait());
    }
    require_ok(tree.flush().wait());
    const TreeStats mid = tree.stats();
    CHECK(mid.flushes >= 5);
    require_ok(tree.compact_all());
    const TreeStats st = tree.stats();
    CHECK(st.files_per_level[0] == 0);
    CHECK(st.compactions > mid.compactions);
    require_ok(tree.close());
  }

  Tree tree = open_or_fail(builder);
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = r.range("", "");
  REQUIRE(it.ok());
  int i = 0;
  for (moved(it->seek_first(), *it); it->valid(); moved(it->next(), *it), ++i) {
    if (i >= kKeys || it->key() != key_of(i) || *it->value() != value_of(i)) {
      FAIL("forward scan differs at " << i << ": " << std::string(it->key()));
    }
  }
  CHECK(i == kKeys);
  i = kKeys - 1;
  for (moved(it->seek_last(), *it); it->valid(); moved(it->prev(), *it), --i) {
    if (i < 0 || it->key() != key_of(i)) FAIL("backward scan differs at " << i);
  }
  CHECK(i == -1);
  for (int k = 0; k < kKeys; k += 97) {
    std::optional<std::string> v = get_or_fail(r, key_of(k));
    if (v != value_of(k)) FAIL("point read of " << key_of(k));
  }
  CHECK_FALSE(get_or_fail(r, "key9999999999").has_value());
  Result<uint64_t> n = r.count("", "");
  REQUIRE(n.ok());
  CHECK(*n == static_cast<uint64_t>(kKeys));
  require_ok(tree.close());
  std::system(("rm -rf '" + dir + "'").c_str());
}
