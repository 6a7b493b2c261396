// MemTable insert and lookup (core/src/memtable): the skiplist over the arena that receives every
// committed write and answers every read of recent data.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "memtable/arena.h"
#include "memtable/memtable.h"
#include "memtable/skiplist.h"
#include "platform/posix/posix_platform.h"

namespace skv::microbench {
namespace {

// Entries a memtable holds before the insert benchmark starts a fresh one: about what a 64 MiB
// memtable holds with ~840-byte values, so the skiplist depth matches a real one.
constexpr size_t kInsertEntries = size_t{1} << 17;

// MemTable::add of one version of a new key (26-byte key, value of `value_bytes`), keys in
// random order. The memtable is replaced (untimed) every kInsertEntries inserts, so the figure is
// the average over a memtable's life from empty to about 64 MiB. blocks=0: 256 KiB arena blocks
// from the heap (what a native tree used before 2026-12-06); blocks=1: the POSIX platform's
// 2 MiB blocks advised for huge pages (what a native tree with 64 MiB memtables uses now,
// docs/memtable.md).
void BM_MemTableInsert(benchmark::State& state) {
  const std::vector<std::string> keys = make_keys(0, kInsertEntries);
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, static_cast<size_t>(state.range(0)));
  const bool platform_blocks = state.range(1) != 0;
  auto make_memtable = [&] {
    if (!platform_blocks) return std::make_unique<MemTable>(size_t{256} << 10);
    auto blocks = std::make_shared<PosixMemoryBlocks>();
    return std::make_unique<MemTable>(blocks->preferred_block_size(), 0, blocks);
  };
  auto mem = make_memtable();
  size_t next = 0;
  SequenceNumber seq = 1;
  for (auto _ : state) {
    if (next == keys.size()) {
      state.PauseTiming();
      mem = make_memtable();
      next = 0;
      state.ResumeTiming();
    }
    mem->add(seq, ValueKind::Value, keys[next++], value, seq);
    ++seq;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kKeySize + value.size()));
}
BENCHMARK(BM_MemTableInsert)
    ->ArgNames({"value_bytes", "blocks"})
    ->Args({100, 0})
    ->Args({100, 1})
    ->Args({840, 0})
    ->Args({840, 1});

// A memtable of `entries` keys with 100-byte values, built once per size and shared by the runs.
struct FilledMemTable {
  std::vector<std::string> keys;  // present, in insertion (random) order
  std::vector<std::string> absent;
  std::unique_ptr<MemTable> mem;
};

const FilledMemTable& filled_memtable(size_t entries) {
  static std::vector<std::pair<size_t, std::unique_ptr<FilledMemTable>>> cache;
  for (const auto& [n, f] : cache) {
    if (n == entries) return *f;
  }
  auto f = std::make_unique<FilledMemTable>();
  f->keys = make_keys(0, entries);
  f->absent = make_keys(entries, entries);
  f->mem = std::make_unique<MemTable>();
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, 100);
  SequenceNumber seq = 1;
  for (const std::string& k : f->keys) {
    f->mem->add(seq, ValueKind::Value, k, value, seq);
    ++seq;
  }
  cache.emplace_back(entries, std::move(f));
  return *cache.back().second;
}

// MemTable::get of one key at the latest snapshot in a memtable of `entries` keys, keys visited
// in a shuffled order. hit=1 looks up present keys, hit=0 keys that are absent (the full
// skiplist descent, no match).
void BM_MemTableGet(benchmark::State& state) {
  const FilledMemTable& f = filled_memtable(static_cast<size_t>(state.range(0)));
  const bool hit = state.range(1) != 0;
  const std::vector<std::string>& probe = hit ? f.keys : f.absent;
  const std::vector<uint32_t> order = shuffled_indices(probe.size(), kSeed + 1);
  size_t i = 0;
  size_t found = 0;
  for (auto _ : state) {
    MemTable::GetResult r;
    found += f.mem->get(probe[order[i]], kMaxSequenceNumber, &r) ? 1 : 0;
    benchmark::DoNotOptimize(r);
    if (++i == order.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["found_ratio"] =
      static_cast<double>(found) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_MemTableGet)
    ->ArgNames({"entries", "hit"})
    ->Args({100000, 1})
    ->Args({100000, 0})
    ->Args({1000000, 1});

// Where a skiplist key lives relative to its node, in one process so the two layouts are
// compared side by side: layout=0 keeps each key in its own arena allocation made before the node
// (the memtable's layout until 2026-12-05), layout=1 writes it into the room right after the
// node's links (SkipList::insert_with_room, the memtable's layout since). Keys of kKeySize bytes
// followed by `value_bytes`, as memtable entries are; one SkipList::contains of a present key per
// iteration, keys visited in a shuffled order.
struct KeyCompare {
  int operator()(const char* a, const char* b) const { return std::memcmp(a, b, kKeySize); }
};
using EntryList = SkipList<const char*, KeyCompare>;

struct LayoutLists {
  std::vector<std::string> keys;
  Arena separate_arena, inline_arena;
  EntryList separate{KeyCompare(), &separate_arena};
  EntryList inline_list{KeyCompare(), &inline_arena};
};

const LayoutLists& layout_lists(size_t entries, size_t value_bytes) {
  static std::vector<std::pair<std::pair<size_t, size_t>, std::unique_ptr<LayoutLists>>> cache;
  for (const auto& [shape, lists] : cache) {
    if (shape == std::make_pair(entries, value_bytes)) return *lists;
  }
  auto l = std::make_unique<LayoutLists>();
  l->keys = make_keys(0, entries);
  std::mt19937_64 rng(kSeed);
  const std::string value = make_value(rng, value_bytes);
  auto fill = [&](char* mem, const std::string& k) {
    std::memcpy(mem, k.data(), kKeySize);
    std::memcpy(mem + kKeySize, value.data(), value.size());
  };
  // Built alternately, so neither list's memory is warmer or more compact than the other's.
  for (const std::string& k : l->keys) {
    char* mem = l->separate_arena.allocate(kKeySize + value.size());
    fill(mem, k);
    l->separate.insert(mem);
    l->inline_list.insert_with_room(kKeySize + value.size(), [&](char* room) -> const char* {
      fill(room, k);
      return room;
    });
  }
  cache.emplace_back(std::make_pair(entries, value_bytes), std::move(l));
  return *cache.back().second;
}

void BM_SkipListLayout(benchmark::State& state) {
  const LayoutLists& l =
      layout_lists(static_cast<size_t>(state.range(1)), static_cast<size_t>(state.range(2)));
  const EntryList& list = state.range(0) != 0 ? l.inline_list : l.separate;
  const std::vector<uint32_t> order = shuffled_indices(l.keys.size(), kSeed + 1);
  size_t i = 0;
  size_t found = 0;
  for (auto _ : state) {
    found += list.contains(l.keys[order[i]].data()) ? 1 : 0;
    if (++i == order.size()) i = 0;
  }
  benchmark::DoNotOptimize(found);
  if (found != static_cast<size_t>(state.iterations())) state.SkipWithError("a key was not found");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
// 80,000 entries of 840-byte values: about one 64 MiB memtable of browser-shaped rows.
BENCHMARK(BM_SkipListLayout)
    ->ArgNames({"layout", "entries", "value_bytes"})
    ->Args({0, 80000, 840})
    ->Args({1, 80000, 840})
    ->Args({0, 1000000, 100})
    ->Args({1, 1000000, 100});

}  // namespace
}  // namespace skv::microbench
