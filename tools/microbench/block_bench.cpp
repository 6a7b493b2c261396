// SSTable block seek and bloom filter probe (core/src/sstable): the two steps of a point lookup
// that run on data already in memory.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "format/internal_key.h"
#include "sstable/block.h"
#include "sstable/block_builder.h"
#include "sstable/bloom.h"
#include "sstable/table_options.h"

namespace skv::microbench {
namespace {

// One data block as the table builder makes it: sorted internal keys with 100-byte values, the
// default restart interval, filled up to the default 64 KiB block size.
struct BuiltBlock {
  std::shared_ptr<const Block> block;
  std::vector<std::string> seek_keys;  // one per entry: the seek key of its user key
};

const BuiltBlock& built_block() {
  static const BuiltBlock* b = [] {
    auto* out = new BuiltBlock;
    const TableOptions defaults;
    BlockBuilder builder(defaults.block_restart_interval);
    std::mt19937_64 rng(kSeed);
    const std::string value = make_value(rng, 100);
    for (const std::string& k : sorted(make_keys(0, 4096))) {
      if (builder.size_estimate() >= defaults.block_size) break;
      builder.add(make_internal_key(k, 1, ValueKind::Value, 1), value);
      out->seek_keys.push_back(make_seek_key(k, kMaxSequenceNumber));
    }
    out->block =
        value_or_die(Block::create(BlockContents::copy_of(builder.finish()), "microbench.block", 0),
                     "Block::create");
    return out;
  }();
  return *b;
}

// BlockIterator::seek to a present key of one 64 KiB block (binary search over the restart
// points, then a linear scan of at most one restart run), keys in shuffled order, reading the
// value found. fresh_iterator=1 also constructs the iterator for each seek, as Table::get does.
void BM_BlockSeek(benchmark::State& state) {
  const BuiltBlock& b = built_block();
  const bool fresh = state.range(0) != 0;
  const std::vector<uint32_t> order = shuffled_indices(b.seek_keys.size(), kSeed + 2);
  BlockIterator reused(b.block, "microbench.block", 0);
  size_t i = 0;
  for (auto _ : state) {
    const std::string& target = b.seek_keys[order[i]];
    if (fresh) {
      BlockIterator it(b.block, "microbench.block", 0);
      it.seek(target);
      benchmark::DoNotOptimize(it.value().data());
    } else {
      reused.seek(target);
      benchmark::DoNotOptimize(reused.value().data());
    }
    if (++i == order.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["entries"] = static_cast<double>(b.seek_keys.size());
  state.counters["restarts"] = static_cast<double>(b.block->num_restarts());
}
BENCHMARK(BM_BlockSeek)->ArgName("fresh_iterator")->Arg(0)->Arg(1);

// A bloom filter over 100,000 keys at the default 10 bits per key.
struct BuiltFilter {
  std::string encoded;
  BloomFilter filter;
  std::vector<std::string> present;
  std::vector<std::string> absent;
};

const BuiltFilter& built_filter() {
  static const BuiltFilter* f = [] {
    constexpr size_t kKeys = 100000;
    auto* out = new BuiltFilter;
    const TableOptions defaults;
    BloomFilterBuilder builder(defaults.bloom_bits_per_key);
    out->present = make_keys(0, kKeys);
    out->absent = make_keys(kKeys, kKeys);
    for (const std::string& k : out->present) builder.add_key(k);
    builder.finish(&out->encoded);
    if (!out->filter.parse(out->encoded)) check_ok(Status::corruption("bad filter"), "bloom");
    return out;
  }();
  return *f;
}

// BloomFilter::may_contain for one 26-byte key (hash plus 7 probes), keys in shuffled order over
// a 122 KiB filter. present=1 probes keys that were added (always true), present=0 keys that
// were not; fp_rate is the share of those the filter let through.
void BM_BloomProbe(benchmark::State& state) {
  const BuiltFilter& f = built_filter();
  const bool present = state.range(0) != 0;
  const std::vector<std::string>& probe = present ? f.present : f.absent;
  const std::vector<uint32_t> order = shuffled_indices(probe.size(), kSeed + 3);
  size_t i = 0;
  size_t positives = 0;
  for (auto _ : state) {
    positives += f.filter.may_contain(probe[order[i]]) ? 1 : 0;
    if (++i == order.size()) i = 0;
  }
  benchmark::DoNotOptimize(positives);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  if (!present) {
    state.counters["fp_rate"] =
        static_cast<double>(positives) / static_cast<double>(state.iterations());
  }
}
BENCHMARK(BM_BloomProbe)->ArgName("present")->Arg(1)->Arg(0);

}  // namespace
}  // namespace skv::microbench

namespace skv::microbench {
namespace {

// The raw bytes of one data block of the default size with `value_bytes` values, as a scan reads
// it from a table (after decompression).
const std::string& raw_block(size_t value_bytes) {
  static std::vector<std::pair<size_t, std::string>> cache;
  for (const auto& [v, raw] : cache) {
    if (v == value_bytes) return raw;
  }
  const TableOptions defaults;
  BlockBuilder builder(defaults.block_restart_interval);
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, value_bytes);
  for (const std::string& k : sorted(make_keys(0, 4096))) {
    if (builder.size_estimate() >= defaults.block_size) break;
    builder.add(make_internal_key(k, 1, ValueKind::Value, 1), value);
  }
  cache.emplace_back(value_bytes, std::string(builder.finish()));
  return cache.back().second;
}

// What a scan pays for each block it reads that is not cached, after the read and the
// decompression: Block::create (which checks the layout of every entry), then an iterator over
// every entry. Values of `value_bytes`; one iteration is one block, items are entries.
void BM_BlockLoadAndWalk(benchmark::State& state) {
  const std::string& raw = raw_block(static_cast<size_t>(state.range(0)));
  size_t entries = 0;
  for (auto _ : state) {
    std::shared_ptr<const Block> block =
        value_or_die(Block::create(BlockContents::copy_of(raw), "microbench.block", 0), "create");
    BlockIterator it(block, "microbench.block", 0);
    entries = 0;
    for (it.seek_first(); it.valid(); it.next()) {
      benchmark::DoNotOptimize(it.value().data());
      ++entries;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * entries));
  state.counters["entries"] = static_cast<double>(entries);
}
BENCHMARK(BM_BlockLoadAndWalk)->ArgName("value_bytes")->Arg(100)->Arg(840);

}  // namespace
}  // namespace skv::microbench
