// Helpers shared by the tree integration tests: opening trees on the in-memory platform, reading
// a whole tree into a std::map, and a little deterministic randomness.
//
// Thread safety: none of these helpers keep state; a MemoryPlatform may be shared by threads.

#ifndef SKV_TESTS_SUPPORT_TREE_FIXTURE_H_
#define SKV_TESTS_SUPPORT_TREE_FIXTURE_H_

#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "platform/memory/memory_platform.h"
#include "skv/skv.h"
#include "util/random.h"

namespace skv::testing {

using Model = std::map<std::string, std::string>;

// Options small enough that a few thousand writes exercise flushes and compactions.
inline TreeBuilder small_tree(std::shared_ptr<Platform> platform, std::string path = "db") {
  TreeBuilder b;
  b.with_path(std::move(path))
      .with_platform(std::move(platform))
      .with_memtable_size(16 * 1024)
      .with_block_size(1024)
      .with_block_cache_capacity(256 * 1024)
      .with_target_file_size(64 * 1024)
      .with_level_base_bytes(128 * 1024)
      .with_l0_compaction_trigger(2);
  return b;
}

inline Tree open_or_fail(const TreeBuilder& builder) {
  Result<Tree> t = builder.build();
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  return std::move(t).value();
}

inline Transaction begin_or_fail(const Tree& tree, Mode mode = Mode::ReadWrite) {
  Result<Transaction> tx = tree.begin_with_mode(mode);
  INFO(tx.status().to_string());
  REQUIRE(tx.ok());
  return std::move(tx).value();
}

inline void require_ok(const Status& s) {
  INFO(s.to_string());
  REQUIRE(s.ok());
}

// Commits "v-<k>" under `k` in a transaction of its own; the commit's outcome (errors are the
// test's to check). REQUIRES: a concurrent executor or the inline commit pipeline.
inline Status commit_one(const Tree& tree, const std::string& k,
                         Durability d = Durability::Immediate) {
  Result<Transaction> tx = tree.begin();
  if (!tx.ok()) return tx.status();
  Status s = tx->set(k, "v-" + k);
  if (!s.ok()) return s;
  tx->set_durability(d);
  return tx->commit().wait();
}

// Checks an Iterator move: it returned valid(), and no error stopped it.
inline void moved(bool returned, const Iterator& it) {
  require_ok(it.status());
  CHECK(returned == it.valid());
}

// Every key and value of the tree, read through one read-only transaction.
inline Model read_all(const Tree& tree) {
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  Model out;
  for (it->seek_first(); it->valid(); it->next()) {
    Result<std::string_view> v = it->value();
    REQUIRE(v.ok());
    out.emplace(std::string(it->key()), std::string(*v));
  }
  require_ok(it->status());
  return out;
}

inline std::optional<std::string> get_or_fail(const Transaction& tx, std::string_view key) {
  Result<std::optional<std::string>> r = tx.get(key);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return *r;
}

// A well-mixed 64-bit hash of x (also used to derive data from ids).
inline uint64_t mix64(uint64_t x) { return splitmix64_mix(x); }

// splitmix64, so failures replay from the seed printed with them.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64_next(&state_); }
  uint64_t uniform(uint64_t n) { return next() % n; }
  bool one_in(uint64_t n) { return uniform(n) == 0; }

 private:
  uint64_t state_;
};

}  // namespace skv::testing

#endif  // SKV_TESTS_SUPPORT_TREE_FIXTURE_H_
