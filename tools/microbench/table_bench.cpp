// SSTable point lookup (Table::get, core/src/sstable/table.cpp) on one table of 100,000 keys with
// 100-byte values, written with the default table options (64 KiB blocks, zstd level 1, bloom 10
// bits per key) to the in-memory platform: bloom probe, index block seek, data block load, data
// block seek, value copy.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cache/block_cache.h"
#include "format/internal_key.h"
#include "platform/memory/memory_platform.h"
#include "sstable/table.h"
#include "sstable/table_builder.h"
#include "sstable/table_options.h"

namespace skv::microbench {
namespace {

constexpr size_t kTableKeys = 100000;
constexpr uint64_t kFileNumber = 7;

struct BuiltTable {
  std::shared_ptr<MemoryPlatform> platform;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<BlockCache> cache;
  std::shared_ptr<Table> cached;    // reads through `cache`, warmed with every block
  std::shared_ptr<Table> uncached;  // no cache: every lookup reads and decodes its block
  std::vector<std::string> present;
  std::vector<std::string> absent;
};

const BuiltTable& built_table() {
  static const BuiltTable* t = [] {
    auto* out = new BuiltTable;
    out->platform = std::make_shared<MemoryPlatform>();
    out->storage =
        value_or_die(out->platform->open_storage("microbench-table", StorageOptions{}), "storage");
    const std::string name = "000007.sst";
    out->present = make_keys(0, kTableKeys);
    out->absent = make_keys(kTableKeys, kTableKeys);

    TableBuilder builder(TableOptions{},
                         value_or_die(out->storage->objects().create(name), "create table"),
                         kFileNumber);
    std::mt19937_64 rng(kSeed);
    for (const std::string& k : sorted(out->present)) {
      check_ok(builder.add(make_internal_key(k, 1, ValueKind::Value, 1), make_value(rng, 100)),
               "TableBuilder::add");
    }
    check_ok(builder.finish(), "TableBuilder::finish");

    // As large as the default tree's cache: every block of this table fits.
    out->cache = std::make_unique<BlockCache>(Options{}.block_cache_capacity);
    out->cached = value_or_die(Table::open(value_or_die(out->storage->objects().open(name), "open"),
                                           kFileNumber, out->cache.get()),
                               "Table::open");
    out->uncached = value_or_die(
        Table::open(value_or_die(out->storage->objects().open(name), "open"), kFileNumber, nullptr),
        "Table::open");
    for (const std::string& k : out->present) {
      Table::GetResult r;
      check_ok(out->cached->get(k, kMaxSequenceNumber, &r), "warm-up get");
      if (!r.found) check_ok(Status::corruption("key missing from the table"), "warm-up get");
    }
    return out;
  }();
  return *t;
}

// Table::get of one key at the latest snapshot, keys in shuffled order. cached=1 reads through a
// block cache that already holds every block (the hot case); cached=0 opens the table without a
// cache, so each lookup also reads its 64 KiB block from the in-memory file, checks its CRC32C,
// decompresses it with zstd and checks its restart array (the cost of a block cache miss when
// the file's pages are in memory). hit=0 looks up absent keys: mostly a bloom probe.
void BM_TableGet(benchmark::State& state) {
  const BuiltTable& t = built_table();
  const bool cached = state.range(0) != 0;
  const bool hit = state.range(1) != 0;
  const Table& table = cached ? *t.cached : *t.uncached;
  const std::vector<std::string>& probe = hit ? t.present : t.absent;
  const std::vector<uint32_t> order = shuffled_indices(probe.size(), kSeed + 4);
  size_t i = 0;
  size_t found = 0;
  for (auto _ : state) {
    Table::GetResult r;
    check_ok(table.get(probe[order[i]], kMaxSequenceNumber, &r), "Table::get");
    found += r.found ? 1 : 0;
    benchmark::DoNotOptimize(r);
    if (++i == order.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["found_ratio"] =
      static_cast<double>(found) / static_cast<double>(state.iterations());
  state.counters["data_blocks"] = static_cast<double>(table.properties().data_blocks);
  state.counters["file_KiB"] = static_cast<double>(table.file_size()) / 1024.0;
}
BENCHMARK(BM_TableGet)->ArgNames({"cached", "hit"})->Args({1, 1})->Args({0, 1})->Args({1, 0});

}  // namespace
}  // namespace skv::microbench
