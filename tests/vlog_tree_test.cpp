// skv-test-modules: util wal vlog memtable sstable version engine memory fault
// The value log wired into the tree (docs/vlog.md): which values a flush separates, reads of
// separated values through get and iterators (both directions) after flushes, compactions and
// reopening, keys-only reads that never touch the value log, garbage collection by live ratio
// with snapshots and iterators open, crash points, and damaged or missing value logs reported as
// corruption naming the file and offset.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "format/file_header.h"
#include "format/file_names.h"
#include "platform/fault/fault_platform.h"
#include "support/tree_fixture.h"
#include "version/vlog_cache.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_format.h"
#include "vlog/vlog_writer.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr size_t kThreshold = 256;

TreeBuilder vlog_tree(std::shared_ptr<Platform> platform, double ratio = 0.5) {
  // Memtables large enough that the tests decide when to flush, and room for four L0 tables.
  TreeBuilder b = small_tree(std::move(platform));
  b.with_memtable_size(256 * 1024)
      .with_l0_compaction_trigger(4)
      .with_enable_vlog(true)
      .with_vlog_value_threshold(kThreshold)
      .with_vlog_max_file_size(16 * 1024)
      .with_vlog_gc_ratio(ratio)
      .with_vlog_cache_capacity(64 * 1024);
  return b;
}

// A value of `size` bytes that tells which key and round it belongs to.
std::string value_of(const std::string& key, int round, size_t size) {
  std::string v = key + "/" + std::to_string(round) + "/";
  while (v.size() < size) v += static_cast<char>('a' + (v.size() * 7 + round) % 26);
  v.resize(size);
  return v;
}

// The value log files of database "db", by name.
std::vector<MemoryFileInfo> vlog_files(MemoryPlatform& memory) {
  std::vector<MemoryFileInfo> out;
  auto files = memory.list_files("db");
  REQUIRE(files.ok());
  for (const auto& f : *files) {
    FileType type;
    uint64_t number = 0;
    if (parse_file_name(f.name, &type, &number) && type == FileType::ValueLog) out.push_back(f);
  }
  return out;
}

// Reads everything backwards through one iterator.
Model read_all_backward(const Tree& tree) {
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  Model out;
  for (it->seek_last(); it->valid(); it->prev()) {
    Result<std::string_view> v = it->value();
    REQUIRE(v.ok());
    out.emplace(std::string(it->key()), std::string(*v));
  }
  require_ok(it->status());
  return out;
}

void check_model(const Tree& tree, const Model& model) {
  CHECK(read_all(tree) == model);
  CHECK(read_all_backward(tree) == model);
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  for (const auto& [k, v] : model) {
    std::optional<std::string> got = get_or_fail(tx, k);
    REQUIRE(got.has_value());
    CHECK(*got == v);
  }
}

// The error a point read of `key` gives (OK if it succeeds).
Status get_status(const Tree& tree, const std::string& key) {
  Result<std::optional<std::string>> r = tree.get(key);
  return r.status();
}

}  // namespace

TEST_CASE("a flush separates values at the threshold and keeps smaller ones inline",
          "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(vlog_tree(memory));
  const std::string below = value_of("below", 0, kThreshold - 1);
  const std::string at = value_of("at", 0, kThreshold);
  require_ok(tree.set("below", below));
  require_ok(tree.set("at", at));
  require_ok(tree.set("empty", ""));
  require_ok(tree.flush().wait());

  // One value log holding exactly one entry: the value at the threshold.
  std::vector<MemoryFileInfo> files = vlog_files(*memory);
  REQUIRE(files.size() == 1);
  CHECK(files[0].size == kFileHeaderSize + vlog::entry_size(2, kThreshold));
  CHECK(files[0].synced_size == files[0].size);
  TreeStats st = tree.stats();
  CHECK(st.vlog_files == 1);
  CHECK(st.vlog_bytes == files[0].size);
  CHECK(st.vlog_garbage_bytes == 0);
  check_model(tree, {{"at", at}, {"below", below}, {"empty", ""}});
}

TEST_CASE("without enable_vlog nothing is separated", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(small_tree(memory));
  require_ok(tree.set("big", std::string(4096, 'x')));
  require_ok(tree.flush().wait());
  CHECK(vlog_files(*memory).empty());
  CHECK(tree.stats().vlog_files == 0);
}

TEST_CASE("invalid value log options are named errors", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fails_naming = [&](TreeBuilder b, const std::string& name) {
    Result<Tree> t = b.build();
    REQUIRE(t.status().code() == Code::InvalidArgument);
    CHECK(t.status().message().find(name) != std::string::npos);
  };
  fails_naming(vlog_tree(memory).with_vlog_gc_ratio(0), "vlog_gc_ratio");
  fails_naming(vlog_tree(memory).with_vlog_gc_ratio(1.5), "vlog_gc_ratio");
  fails_naming(vlog_tree(memory).with_vlog_gc_ratio(-0.1), "vlog_gc_ratio");
  fails_naming(vlog_tree(memory).with_vlog_value_threshold(0), "vlog_value_threshold");
  fails_naming(vlog_tree(memory).with_vlog_value_threshold(kMaxValueSize + 1),
               "vlog_value_threshold");
  fails_naming(vlog_tree(memory).with_vlog_max_file_size(100), "vlog_max_file_size");
  Tree ok = open_or_fail(vlog_tree(memory).with_vlog_gc_ratio(1.0));
}

TEST_CASE("separated values read back through get and ranges after flush, compaction, reopen",
          "[vlog][tree]") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    INFO("seed " << seed);
    Rng rng(seed);
    auto memory = std::make_shared<MemoryPlatform>();
    Model model;
    for (int life = 0; life < 3; ++life) {
      Tree tree = open_or_fail(vlog_tree(memory));
      check_model(tree, model);
      for (int i = 0; i < 400; ++i) {
        const std::string k = "k" + std::to_string(rng.uniform(150));
        if (rng.one_in(8)) {
          require_ok(tree.del(k));
          model.erase(k);
          continue;
        }
        const size_t size = rng.one_in(2) ? rng.uniform(kThreshold) : kThreshold + rng.uniform(900);
        const std::string v = value_of(k, i + life * 1000, size);
        require_ok(tree.set(k, v));
        model[k] = v;
      }
      check_model(tree, model);
      require_ok(tree.flush().wait());
      check_model(tree, model);
      if (life == 1) {
        require_ok(tree.compact_all());
        check_model(tree, model);
      }
      CHECK(tree.stats().vlog_files > 0);
      require_ok(tree.close());
    }
    // The value logs rolled over at vlog_max_file_size: no file is much larger.
    for (const auto& f : vlog_files(*memory)) CHECK(f.size < 16 * 1024 + 2048);
  }
}

TEST_CASE("keys-only iterators and count never read the value log", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  Tree tree = open_or_fail(vlog_tree(fault));
  for (int i = 0; i < 40; ++i) {
    const std::string k = "key" + std::to_string(i);
    require_ok(tree.set(k, value_of(k, 0, kThreshold * 2)));
  }
  require_ok(tree.flush().wait());
  REQUIRE(vlog_files(*memory).size() >= 1);

  const uint64_t reads = fault->call_count(FaultOp::Read, ".vlog");
  const uint64_t opens = fault->call_count(FaultOp::Open, ".vlog");
  {
    Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
    Result<uint64_t> n = tx.count("", "");
    REQUIRE(n.ok());
    CHECK(*n == 40);
    Result<Iterator> keys = tx.keys("", "");
    REQUIRE(keys.ok());
    int forward = 0, backward = 0;
    for (keys->seek_first(); keys->valid(); keys->next()) ++forward;
    for (keys->seek_last(); keys->valid(); keys->prev()) ++backward;
    require_ok(keys->status());
    CHECK(forward == 40);
    CHECK(backward == 40);
  }
  CHECK(fault->call_count(FaultOp::Read, ".vlog") == reads);
  CHECK(fault->call_count(FaultOp::Open, ".vlog") == opens);

  // A range with values does read it (so the counts above would have seen a read).
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> range = tx.range("", "");
  REQUIRE(range.ok());
  REQUIRE(range->seek_first());
  CHECK(range->value().ok());
  CHECK(fault->call_count(FaultOp::Read, ".vlog") > reads);
}

TEST_CASE("the value cache serves repeated reads and stays within its capacity", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  Tree tree = open_or_fail(vlog_tree(fault).with_vlog_cache_capacity(4096));
  for (int i = 0; i < 30; ++i) {
    const std::string k = "key" + std::to_string(i);
    require_ok(tree.set(k, value_of(k, 0, 1000)));
  }
  require_ok(tree.flush().wait());
  CHECK(get_or_fail(begin_or_fail(tree), "key3") == value_of("key3", 0, 1000));
  const uint64_t reads = fault->call_count(FaultOp::Read, ".vlog");
  CHECK(get_or_fail(begin_or_fail(tree), "key3") == value_of("key3", 0, 1000));
  CHECK(fault->call_count(FaultOp::Read, ".vlog") == reads);
  (void)read_all(tree);
  CHECK(tree.stats().vlog_cache_usage <= 4096);
  CHECK(tree.stats().vlog_cache_usage > 0);
}

namespace {

// Round 1 writes x0..x9, y0..y9 and z0..z9 with separated values and flushes them into one value
// log; the x keys are then overwritten and flushed, `before_y` runs (it may take a snapshot that
// still sees the first y values), the y keys are overwritten and flushed, `before_compaction`
// runs, and everything is compacted. Without snapshots two thirds of the first value log are
// garbage then (the x and y values), with a snapshot between the overwrites one third (the x
// values), and the z values stay live either way. Background work may collect garbage meanwhile.
template <typename Fn1, typename Fn2>
void two_rounds(const Tree& tree, Fn1 before_y, Fn2 before_compaction) {
  auto write = [&](const char* prefix, int round) {
    for (int i = 0; i < 10; ++i) {
      const std::string k = prefix + std::to_string(i);
      require_ok(tree.set(k, value_of(k, round, 500)));
    }
  };
  write("x", 1);
  write("y", 1);
  write("z", 1);
  require_ok(tree.flush().wait());
  write("x", 2);
  require_ok(tree.flush().wait());
  before_y();
  write("y", 2);
  require_ok(tree.flush().wait());
  before_compaction();
  require_ok(tree.compact_all());
}

void nothing() {}

}  // namespace

TEST_CASE("garbage collection keeps the values a snapshot and an iterator see",
          "[vlog][tree][gc]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(vlog_tree(memory, 0.3));
  std::optional<Transaction> snapshot;
  std::string first;
  std::optional<Transaction> reader;
  std::optional<Result<Iterator>> it;
  two_rounds(
      tree, [&] { snapshot.emplace(begin_or_fail(tree, Mode::ReadOnly)); },
      [&] {
        // An iterator opened now pins a version that has the first value log.
        first = vlog_files(*memory).front().name;
        reader.emplace(begin_or_fail(tree, Mode::ReadOnly));
        it.emplace(reader->range("", ""));
        REQUIRE(it->ok());
      });

  require_ok(tree.collect_vlog_garbage());
  TreeStats st = tree.stats();
  const uint64_t entry = vlog::entry_size(2, 500);
  CHECK(st.vlog_garbage_bytes == 0);
  CHECK(st.vlog_gc_runs >= 1);
  // The y values the snapshot still sees, and the z values.
  CHECK(st.vlog_gc_bytes_moved == 20 * entry);

  // The file stays while the iterator may read it; the iterator reads its own values.
  auto has_first = [&] {
    for (const auto& f : vlog_files(*memory)) {
      if (f.name == first) return true;
    }
    return false;
  };
  CHECK(has_first());
  Model seen;
  for ((*it)->seek_first(); (*it)->valid(); (*it)->next()) {
    seen.emplace(std::string((*it)->key()), std::string((*it)->value().value()));
  }
  require_ok((*it)->status());
  REQUIRE(seen.size() == 30);
  CHECK(seen["y3"] == value_of("y3", 2, 500));
  CHECK(seen["x3"] == value_of("x3", 2, 500));
  CHECK(seen["z3"] == value_of("z3", 1, 500));

  // The snapshot still sees the first y values, now read from their new place.
  CHECK(get_or_fail(*snapshot, "y7") == value_of("y7", 1, 500));
  CHECK(get_or_fail(*snapshot, "x7") == value_of("x7", 2, 500));
  Result<Iterator> old = snapshot->range("y", "z");
  REQUIRE(old.ok());
  int n = 0;
  for (old->seek_last(); old->valid(); old->prev(), ++n) {
    CHECK(old->value().value() == value_of(std::string(old->key()), 1, 500));
  }
  require_ok(old->status());
  CHECK(n == 10);

  // Once the iterator is gone, the next collection removes the file.
  it.reset();
  reader.reset();
  require_ok(tree.collect_vlog_garbage());
  CHECK_FALSE(has_first());
  CHECK(tree.stats().vlog_files == vlog_files(*memory).size());

  // And everything reads the same after reopening.
  snapshot.reset();
  require_ok(tree.close());
  Tree again = open_or_fail(vlog_tree(memory));
  Transaction tx = begin_or_fail(again, Mode::ReadOnly);
  CHECK(get_or_fail(tx, "y7") == value_of("y7", 2, 500));
  CHECK(get_or_fail(tx, "z7") == value_of("z7", 1, 500));
  CHECK(read_all(again).size() == 30);
}

TEST_CASE("a value log no table points into is removed without being rewritten",
          "[vlog][tree][gc]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(vlog_tree(memory, 1.0));
  // Only x values in the first value log: compaction drops them all, and with them the file.
  for (int round = 1; round <= 2; ++round) {
    for (int i = 0; i < 10; ++i) {
      const std::string k = "x" + std::to_string(i);
      require_ok(tree.set(k, value_of(k, round, 500)));
    }
    require_ok(tree.flush().wait());
  }
  REQUIRE(vlog_files(*memory).size() == 2);
  require_ok(tree.compact_all());
  TreeStats st = tree.stats();
  CHECK(st.vlog_gc_bytes_moved == 0);
  CHECK(st.vlog_gc_runs == 0);
  CHECK(st.vlog_garbage_bytes == 0);
  CHECK(st.vlog_files == 1);
  CHECK(vlog_files(*memory).size() == 1);
  Model all = read_all(tree);
  CHECK(all.size() == 10);
  CHECK(all["x1"] == value_of("x1", 2, 500));
}

TEST_CASE("background work collects value log garbage once no level needs compacting",
          "[vlog][tree][gc]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(vlog_tree(memory, 0.3));
  std::optional<Transaction> snapshot;
  two_rounds(
      tree, [&] { snapshot.emplace(begin_or_fail(tree, Mode::ReadOnly)); }, nothing);
  while (memory->queue_executor()->run_pending(16) > 0) {
  }
  CHECK(tree.stats().vlog_garbage_bytes == 0);
  CHECK(tree.stats().vlog_gc_runs >= 1);
  CHECK(get_or_fail(*snapshot, "y0") == value_of("y0", 1, 500));
  CHECK(get_or_fail(*snapshot, "z0") == value_of("z0", 1, 500));
}

TEST_CASE("a garbage collection step moves about its budget of value bytes", "[vlog][tree][gc]") {
  // Pointers are about 20 bytes while the values they stand for are 500: a step's budget counts
  // the values it moves, so a collection that moves N bytes takes about N / budget steps.
  constexpr uint64_t kBudget = 2048;
  auto memory = std::make_shared<MemoryPlatform>();
  TreeBuilder b = vlog_tree(memory, 0.3);
  b.with_compaction_step_bytes(kBudget).with_vlog_max_file_size(1 << 20);
  Tree tree = open_or_fail(b);
  Model model;
  for (int round = 1; round <= 2; ++round) {
    // Round 1 writes 200 keys, round 2 overwrites half of them: half of the first log is garbage.
    for (int i = 0; i < (round == 1 ? 200 : 100); ++i) {
      const std::string k = "k" + std::to_string(1000 + i);
      model[k] = value_of(k, round, 500);
      require_ok(tree.set(k, model[k]));
    }
    require_ok(tree.flush().wait());
  }
  require_ok(tree.compact_all());
  const TreeStats before = tree.stats();
  REQUIRE(before.vlog_garbage_bytes > 0);
  REQUIRE(before.vlog_gc_runs == 0);

  // Background work collects the garbage in steps of kBudget, one task per step.
  while (memory->queue_executor()->run_pending(1) > 0) {
  }
  const TreeStats after = tree.stats();
  REQUIRE(after.vlog_gc_runs == 1);
  REQUIRE(after.compactions == before.compactions + 1);
  const uint64_t moved = after.vlog_gc_bytes_moved;
  CHECK(moved == 100 * vlog::entry_size(5, 500));
  const uint64_t steps = after.compaction_steps - before.compaction_steps;
  // Each step reads at least its budget (but the last) and at most one entry more; what it reads
  // is the moved values plus the 200 keys and pointers of the table being rewritten.
  const uint64_t entry = vlog::entry_size(5, 500) + 64;
  CHECK(steps * (kBudget + entry) >= moved);
  CHECK((steps - 1) * kBudget <= moved + 200 * 64);
  CHECK(after.vlog_garbage_bytes == 0);
  check_model(tree, model);
}

TEST_CASE("garbage collection reads the values it moves by stretches, not one by one",
          "[vlog][tree][gc]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  Tree tree = open_or_fail(vlog_tree(fault, 0.3).with_vlog_max_file_size(1 << 20));
  // Two flushes write 200 values of 500 bytes into two value logs, the even keys into the first
  // and the odd keys into the second; a third overwrites half of each (i % 4 of 0 or 1). After
  // compaction one table points into all three, its entries alternating between the first two,
  // and the 100 values still live there lie spread over each file (about 50 KiB each).
  Model model;
  auto write = [&](int round, auto keep) {
    for (int i = 0; i < 200; ++i) {
      if (!keep(i)) continue;
      const std::string k = "k" + std::to_string(1000 + i);
      model[k] = value_of(k, round, 500);
      require_ok(tree.set(k, model[k]));
    }
    require_ok(tree.flush().wait());
  };
  write(1, [](int i) { return i % 2 == 0; });
  write(1, [](int i) { return i % 2 == 1; });
  write(2, [](int i) { return i % 4 < 2; });
  require_ok(tree.compact_all());
  REQUIRE(tree.stats().vlog_files == 3);
  REQUIRE(tree.stats().vlog_gc_runs == 0);

  const uint64_t before = fault->call_count(FaultOp::Read, ".vlog");
  require_ok(tree.collect_vlog_garbage());
  const uint64_t reads = fault->call_count(FaultOp::Read, ".vlog") - before;
  REQUIRE(tree.stats().vlog_gc_runs >= 1);
  CHECK(tree.stats().vlog_gc_bytes_moved == 100 * vlog::entry_size(5, 500));
  // Per value log, its header and one stretch, against 100 reads value by value.
  INFO("value log reads during the collection: " << reads);
  CHECK(reads <= 6);
  check_model(tree, model);
}

TEST_CASE("collect_vlog_garbage with nothing to do, and after close", "[vlog][tree][gc]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(small_tree(memory));
  require_ok(tree.collect_vlog_garbage());
  require_ok(tree.set("a", "b"));
  require_ok(tree.collect_vlog_garbage());
  require_ok(tree.close());
  CHECK(tree.collect_vlog_garbage().code() == Code::Closed);
}

TEST_CASE("a crash after the value log is written but before the manifest leaves no orphan",
          "[vlog][tree][crash]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  Model model;
  {
    Tree tree = open_or_fail(vlog_tree(fault));
    for (int i = 0; i < 20; ++i) {
      const std::string k = "k" + std::to_string(i);
      model[k] = value_of(k, 0, 700);
      require_ok(tree.set(k, model[k]));
    }
    FaultRule rule = FaultRule::every_call(FaultOp::Write);
    rule.target_contains = "MANIFEST";
    fault->set_fault_policy(FaultPolicy{{rule}, 1});
    CHECK_FALSE(tree.flush().wait().ok());
    // The flush wrote its value log (synced, its name too) and its table.
    CHECK(vlog_files(*memory).size() >= 1);
    memory->crash(7, false);
    (void)tree.close();
  }
  fault->clear_faults();
  Tree tree = open_or_fail(vlog_tree(fault));
  // The orphan is gone; the values come back from the WAL and flush again.
  CHECK(vlog_files(*memory).empty());
  check_model(tree, model);
  require_ok(tree.flush().wait());
  CHECK(vlog_files(*memory).size() == 1);
  check_model(tree, model);
}

TEST_CASE("a flush that fails removes the value logs it wrote", "[vlog][tree][fault]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  Model model;
  {
    Tree tree = open_or_fail(vlog_tree(fault).with_vlog_max_file_size(4096));
    for (int i = 0; i < 20; ++i) {
      const std::string k = "k" + std::to_string(i);
      model[k] = value_of(k, 0, 700);
      require_ok(tree.set(k, model[k]));
    }
    // The table cannot be finished: the value logs (several, 4 KiB each) were written first.
    FaultRule rule = FaultRule::every_call(FaultOp::Sync);
    rule.target_contains = ".sst";
    fault->set_fault_policy(FaultPolicy{{rule}, 1});
    Status s = tree.flush().wait();
    INFO(s.to_string());
    CHECK(s.code() == Code::IO);
    CHECK(fault->call_count(FaultOp::Create, ".vlog") >= 3);
    CHECK(vlog_files(*memory).empty());
    (void)tree.close();
  }
  fault->clear_faults();
  Tree tree = open_or_fail(vlog_tree(fault));
  check_model(tree, model);
}

TEST_CASE("a crash right after a flush keeps its value log", "[vlog][tree][crash]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    INFO("seed " << seed);
    auto memory = std::make_shared<MemoryPlatform>();
    Model model;
    {
      Tree tree = open_or_fail(vlog_tree(memory));
      for (int i = 0; i < 30; ++i) {
        const std::string k = "k" + std::to_string(i);
        model[k] = value_of(k, 0, 300 + 40 * i);
        require_ok(tree.set(k, model[k]));
      }
      require_ok(tree.flush().wait());
      // Unsynced writes after the flush may be lost; the flushed values may not.
      require_ok(tree.set("k0", value_of("k0", 1, 900)));
      memory->crash(seed, true);
      (void)tree.close();
    }
    Tree tree = open_or_fail(vlog_tree(memory));
    Model all = read_all(tree);
    if (all["k0"] == value_of("k0", 1, 900)) model["k0"] = all["k0"];
    check_model(tree, model);
  }
}

TEST_CASE("a crash during garbage collection loses nothing", "[vlog][tree][crash][gc]") {
  const FaultRule faults[] = {
      FaultRule::every_call(FaultOp::Write),  // the manifest edit
      FaultRule::every_call(FaultOp::Sync),   // the new value log's sync
      FaultRule::every_call(FaultOp::Write),  // appending to the new value log
  };
  const char* targets[] = {"MANIFEST", ".vlog", ".vlog"};
  for (int fail_at = 0; fail_at < 3; ++fail_at) {
    INFO("fault " << fail_at);
    auto memory = std::make_shared<MemoryPlatform>();
    auto fault = std::make_shared<FaultPlatform>(memory);
    Model model;
    {
      // Written without collecting (ratio 1), then reopened to collect: the z values move.
      Tree tree = open_or_fail(vlog_tree(fault, 1.0));
      two_rounds(tree, nothing, nothing);
      model = read_all(tree);
      require_ok(tree.close());
    }
    {
      Tree tree = open_or_fail(vlog_tree(fault, 0.4));
      REQUIRE(tree.stats().vlog_garbage_bytes > 0);
      FaultRule rule = faults[fail_at];
      rule.target_contains = targets[fail_at];
      fault->set_fault_policy(FaultPolicy{{rule}, 1});
      Status s = tree.collect_vlog_garbage();
      INFO(s.to_string());
      CHECK_FALSE(s.ok());
      memory->crash(static_cast<uint64_t>(fail_at), true);
      (void)tree.close();
    }
    fault->clear_faults();
    Tree tree = open_or_fail(vlog_tree(fault, 0.4));
    check_model(tree, model);
    require_ok(tree.collect_vlog_garbage());
    check_model(tree, model);
    // Every value log left is one the tree points into.
    CHECK(tree.stats().vlog_files == vlog_files(*memory).size());
    CHECK(tree.stats().vlog_garbage_bytes == 0);
  }
}

TEST_CASE("a damaged value log entry is corruption naming the file and offset", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(vlog_tree(memory).with_vlog_cache_capacity(0));
  require_ok(tree.set("a", value_of("a", 0, 400)));
  require_ok(tree.set("b", value_of("b", 0, 400)));
  require_ok(tree.flush().wait());
  std::vector<MemoryFileInfo> files = vlog_files(*memory);
  REQUIRE(files.size() == 1);
  const std::string name = files[0].name;
  // The second entry ("b") starts right after the first.
  const uint64_t b_offset = kFileHeaderSize + vlog::entry_size(1, 400);
  require_ok(memory->flip_byte("db", name, b_offset + 100));

  CHECK(get_status(tree, "a").ok());
  Status s = get_status(tree, "b");
  INFO(s.to_string());
  CHECK(s.is_corruption());
  CHECK(s.message().find(name) != std::string::npos);
  CHECK(s.message().find("offset " + std::to_string(b_offset)) != std::string::npos);

  // An iterator reads a value when value() asks for it: moving onto "b" succeeds, its value()
  // is the error, and the iterator stops with it, in both directions. Keys alone still read.
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  CHECK(it->seek_first());
  REQUIRE(it->value().ok());
  CHECK(it->next());
  CHECK(it->key() == "b");
  Result<std::string_view> v = it->value();
  CHECK(v.status().is_corruption());
  CHECK(v.status().message().find(name) != std::string::npos);
  CHECK_FALSE(it->valid());
  CHECK(it->status().is_corruption());
  CHECK_FALSE(it->next());
  CHECK(it->seek_last());
  CHECK(it->key() == "b");
  CHECK(it->value().status().is_corruption());
  CHECK_FALSE(it->valid());
  CHECK(it->status().is_corruption());
  CHECK(it->status().message().find(name) != std::string::npos);
  // Moving over "b" without asking for its value reads nothing: a scan of keys and values that
  // skips it ends cleanly.
  CHECK(it->seek_first());
  CHECK(it->next());
  CHECK_FALSE(it->next());
  require_ok(it->status());

  // The same through a transaction's own writes merged over the tree.
  Transaction rw = begin_or_fail(tree, Mode::ReadWrite);
  require_ok(rw.set("a0", "mine"));
  Result<Iterator> mixed = rw.range("", "");
  REQUIRE(mixed.ok());
  CHECK(mixed->seek("a0"));
  CHECK(*mixed->value() == "mine");
  CHECK(mixed->next());
  CHECK(mixed->key() == "b");
  CHECK(mixed->value().status().is_corruption());
  CHECK_FALSE(mixed->valid());
  CHECK(mixed->status().is_corruption());
  Result<uint64_t> n = tx.count("", "");
  REQUIRE(n.ok());
  CHECK(*n == 2);
}

TEST_CASE("a short value log is corruption naming the file and offset", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(vlog_tree(memory).with_vlog_cache_capacity(0));
  require_ok(tree.set("a", value_of("a", 0, 400)));
  require_ok(tree.flush().wait());
  const std::string name = vlog_files(*memory).at(0).name;
  require_ok(memory->truncate_file("db", name, 200));
  Status s = get_status(tree, "a");
  INFO(s.to_string());
  CHECK(s.is_corruption());
  CHECK(s.message().find(name) != std::string::npos);
  CHECK(s.message().find("offset 64") != std::string::npos);
}

TEST_CASE("a missing value log is corruption, at open and on a read", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  std::string name;
  {
    Tree tree = open_or_fail(vlog_tree(fault).with_vlog_cache_capacity(0));
    require_ok(tree.set("a", value_of("a", 0, 400)));
    require_ok(tree.flush().wait());
    name = vlog_files(*memory).at(0).name;
    // A read that cannot find the file (the platform says NotFound).
    FaultRule rule = FaultRule::every_call(FaultOp::Open, Code::NotFound);
    rule.target_contains = ".vlog";
    fault->set_fault_policy(FaultPolicy{{rule}, 1});
    Status s = get_status(tree, "a");
    INFO(s.to_string());
    CHECK(s.is_corruption());
    CHECK(s.message().find(name) != std::string::npos);
    CHECK(s.message().find("missing") != std::string::npos);
    CHECK(s.message().find("offset 64") != std::string::npos);
    fault->clear_faults();
    require_ok(tree.close());
  }
  {
    StorageOptions options;
    auto storage = memory->open_storage("db", options);
    REQUIRE(storage.ok());
    require_ok((*storage)->logs().remove(name));
    require_ok((*storage)->sync_dir());
  }
  Result<Tree> t = vlog_tree(memory).build();
  INFO(t.status().to_string());
  CHECK(t.status().is_corruption());
  CHECK(t.status().message().find(name) != std::string::npos);
}

TEST_CASE("a bad value pointer is corruption naming the key", "[vlog]") {
  auto memory = std::make_shared<MemoryPlatform>();
  StorageOptions options;
  auto storage = memory->open_storage("db", options);
  REQUIRE(storage.ok());
  auto cache = std::make_shared<VlogCache>(storage->get(), 1024, 4);
  std::string value;
  Status s = cache->read("key", std::string("\x05\x01\x20", 3), &value, true);
  INFO(s.to_string());
  CHECK(s.is_corruption());
  CHECK(s.message().find("key") != std::string::npos);
  CHECK(s.message().find("bad value pointer") != std::string::npos);
  // A well-formed pointer into a file that does not exist.
  s = cache->read("key", std::string("\x05\x80\x01\x20", 4), &value, true);
  INFO(s.to_string());
  CHECK(s.is_corruption());
  CHECK(s.message().find("000005.vlog") != std::string::npos);
  CHECK(s.message().find("offset 128") != std::string::npos);
  cache->close();
  CHECK(cache->read("key", std::string("\x05\x80\x01\x20", 4), &value, true).code() ==
        Code::Closed);
}

TEST_CASE("value log reads share the chunk around neighbouring entries", "[vlog][tree]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  const size_t capacity = VlogCache::kMinChunks * VlogCache::kReadChunk;
  Tree tree = open_or_fail(vlog_tree(fault)
                               .with_vlog_cache_capacity(capacity)
                               .with_vlog_max_file_size(1 << 20)
                               .with_memtable_size(4 << 20));
  // Values of 300 bytes (about 50 entries a chunk), 5,000 bytes (some cross a chunk boundary)
  // and 40,000 bytes (larger than a chunk), in one value log.
  Model model;
  for (int i = 0; i < 200; ++i) {
    char k[16];
    std::snprintf(k, sizeof k, "key%04d", i);
    const size_t size = i % 50 == 7 ? 40000 : i % 10 == 3 ? 5000 : 300;
    model[k] = value_of(k, 0, size);
    require_ok(tree.set(k, model[k]));
  }
  require_ok(tree.flush().wait());
  const std::vector<MemoryFileInfo> files = vlog_files(*memory);
  REQUIRE(files.size() == 1);
  const uint64_t chunks = (files[0].size + VlogCache::kReadChunk - 1) / VlogCache::kReadChunk;

  // Neighbours of a 300-byte entry come from the chunk its read cached.
  const uint64_t start = fault->call_count(FaultOp::Read, ".vlog");
  CHECK(get_or_fail(begin_or_fail(tree), "key0001") == model["key0001"]);
  const uint64_t first = fault->call_count(FaultOp::Read, ".vlog");
  CHECK(first > start);
  CHECK(get_or_fail(begin_or_fail(tree), "key0000") == model["key0000"]);
  CHECK(get_or_fail(begin_or_fail(tree), "key0002") == model["key0002"]);
  CHECK(fault->call_count(FaultOp::Read, ".vlog") == first);
  CHECK(tree.stats().vlog_cache_usage == VlogCache::kReadChunk);

  // Every value, forwards and backwards, through point reads: each chunk is read about once, the
  // entries that cross a boundary or outgrow a chunk alone.
  check_model(tree, model);
  const uint64_t reads = fault->call_count(FaultOp::Read, ".vlog") - start;
  INFO("value log reads " << reads << ", chunks " << chunks);
  CHECK(reads <= chunks + 2 * 40 + 10);
  CHECK(reads < model.size());
  CHECK(tree.stats().vlog_cache_usage <= capacity);
}

TEST_CASE("an entry read from a cached chunk is checked like one read from the file", "[vlog]") {
  auto memory = std::make_shared<MemoryPlatform>();
  auto fault = std::make_shared<FaultPlatform>(memory);
  StorageOptions options;
  auto storage = fault->open_storage("db", options);
  REQUIRE(storage.ok());
  std::vector<std::string> pointers;
  {
    Result<std::unique_ptr<LogFile>> f = (*storage)->logs().create(vlog_file_name(5));
    REQUIRE(f.ok());
    vlog::VlogWriter w(std::move(*f), 5);
    for (const char* k : {"a", "b", "c"}) {
      Result<vlog::ValuePointer> p = w.add(k, value_of(k, 0, 1000));
      REQUIRE(p.ok());
      pointers.emplace_back();
      vlog::encode_value_pointer(*p, &pointers.back());
    }
    require_ok(w.sync());
  }
  auto cache =
      std::make_shared<VlogCache>(storage->get(), VlogCache::kMinChunks * VlogCache::kReadChunk, 4);
  std::string value;
  require_ok(cache->read("a", pointers[0], &value, true));
  CHECK(value == value_of("a", 0, 1000));
  CHECK(cache->cache_usage() > 0);
  const uint64_t reads = fault->call_count(FaultOp::Read, ".vlog");
  // From the cached chunk: the right key reads its value, another key is corruption naming the
  // file and offset, and neither reads the file.
  require_ok(cache->read("c", pointers[2], &value, true));
  CHECK(value == value_of("c", 0, 1000));
  Status s = cache->read("x", pointers[1], &value, true);
  INFO(s.to_string());
  CHECK(s.is_corruption());
  CHECK(s.message().find("000005.vlog") != std::string::npos);
  CHECK(s.message().find("different key") != std::string::npos);
  CHECK(fault->call_count(FaultOp::Read, ".vlog") == reads);
  // Without fill_cache a miss reads the entry alone and caches nothing.
  auto cold =
      std::make_shared<VlogCache>(storage->get(), VlogCache::kMinChunks * VlogCache::kReadChunk, 4);
  require_ok(cold->read("b", pointers[1], &value, false));
  CHECK(value == value_of("b", 0, 1000));
  CHECK(cold->cache_usage() == 0);
}
