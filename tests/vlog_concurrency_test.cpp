// skv-test-modules: util wal vlog memtable sstable version engine posix native
// skv-test-wasm: off
// The value log on a real directory (POSIX platform, thread-pool background work): readers get and
// scan separated values on several threads while a writer overwrites them, flushes, compacts and
// collects value log garbage. Every value read must be one the key held (each names its key and
// is checked whole), never an error; at the end the tree reopens with the last values, and the
// directory holds exactly the value logs the tree points into.

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr int kKeys = 64;
constexpr int kReaders = 3;

std::string key_of(int i) { return "key" + std::to_string(i); }

// A value of 300 to 1,500 bytes that names its key and round and can be checked whole.
std::string value_of(int i, int round) {
  std::string v = key_of(i) + "@" + std::to_string(round) + ":";
  const size_t size = 300 + static_cast<size_t>((i * 37 + round * 101) % 1200);
  while (v.size() < size)
    v += static_cast<char>('a' + (v.size() + static_cast<size_t>(round)) % 26);
  return v;
}

// True if `v` is value_of(i, r) for some round r.
bool well_formed(int i, std::string_view v) {
  const std::string prefix = key_of(i) + "@";
  if (v.substr(0, prefix.size()) != prefix) return false;
  const size_t colon = v.find(':');
  if (colon == std::string_view::npos) return false;
  const int round = std::stoi(std::string(v.substr(prefix.size(), colon - prefix.size())));
  return v == value_of(i, round);
}

TreeBuilder builder(const std::string& path) {
  TreeBuilder b;
  b.with_path(path)
      .with_memtable_size(32 * 1024)
      .with_target_file_size(64 * 1024)
      .with_level_base_bytes(256 * 1024)
      .with_enable_vlog(true)
      .with_vlog_value_threshold(512)
      .with_vlog_max_file_size(8 * 1024)
      .with_vlog_gc_ratio(0.3)
      .with_vlog_cache_capacity(16 * 1024);
  return b;
}

}  // namespace

TEST_CASE("readers see whole values while the value log is written and collected",
          "[vlog][concurrency]") {
  TempDir dir("vlog");
  const std::string path = dir.sub("db");
  {
    Tree tree = open_or_fail(builder(path));
    for (int i = 0; i < kKeys; ++i) require_ok(tree.set(key_of(i), value_of(i, 0)));
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r) {
      readers.emplace_back([&, r] {
        Rng rng(static_cast<uint64_t>(r) + 1);
        while (!stop.load()) {
          const int i = static_cast<int>(rng.uniform(kKeys));
          Result<std::optional<std::string>> got = tree.get(key_of(i));
          if (!got.ok() || !got->has_value() || !well_formed(i, **got)) ++failures;
          if (rng.one_in(8)) {
            Result<Transaction> tx = tree.begin_with_mode(Mode::ReadOnly);
            if (!tx.ok()) {
              ++failures;
              continue;
            }
            Result<Iterator> it = tx->range("", "");
            if (!it.ok()) {
              ++failures;
              continue;
            }
            int n = 0;
            const bool backward = rng.one_in(2);
            for (backward ? it->seek_last() : it->seek_first(); it->valid();
                 backward ? it->prev() : it->next()) {
              const std::string k(it->key());
              Result<std::string_view> v = it->value();
              if (!v.ok() || !well_formed(std::stoi(k.substr(3)), *v)) ++failures;
              ++n;
            }
            if (!it->status().ok() || n != kKeys) ++failures;
          }
        }
      });
    }
    for (int round = 1; round <= 30; ++round) {
      for (int i = 0; i < kKeys; ++i) {
        if ((i + round) % 3 != 0) require_ok(tree.set(key_of(i), value_of(i, round)));
      }
      if (round % 5 == 0) require_ok(tree.flush().wait());
      if (round % 10 == 0) require_ok(tree.compact_all());
      if (round % 7 == 0) require_ok(tree.collect_vlog_garbage());
    }
    stop.store(true);
    for (auto& t : readers) t.join();
    CHECK(failures.load() == 0);
    require_ok(tree.collect_vlog_garbage());
    CHECK(tree.stats().vlog_gc_runs > 0);
    require_ok(tree.close());
  }
  Tree tree = open_or_fail(builder(path));
  Model all = read_all(tree);
  REQUIRE(all.size() == static_cast<size_t>(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    int last = 0;
    for (int round = 30; round >= 1; --round) {
      if ((i + round) % 3 != 0) {
        last = round;
        break;
      }
    }
    CHECK(all[key_of(i)] == value_of(i, last));
  }
  // The directory holds the value logs the tree points into, and no others (the tree removes a
  // file once no version has it; nothing holds an old version now).
  require_ok(tree.flush().wait());
  require_ok(tree.collect_vlog_garbage());
  uint64_t on_disk = 0;
  for (const auto& e : std::filesystem::directory_iterator(path)) {
    if (e.path().extension() == ".vlog") ++on_disk;
  }
  CHECK(on_disk == tree.stats().vlog_files);
}
