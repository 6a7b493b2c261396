// skv-test-modules: util memtable
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "memtable/arena.h"
#include "support/counting_blocks.h"

using namespace skv;

TEST_CASE("arena allocations are distinct, aligned on request and counted", "[arena]") {
  const uint64_t seed = 314;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena;
  CHECK(arena.memory_usage() == 0);
  std::vector<std::pair<char*, size_t>> allocs;
  size_t total = 0;
  for (int i = 0; i < 5000; ++i) {
    size_t n = 1 + rng() % 200;
    if (i % 500 == 0) n = Arena::kBlockSize / 4 + 1 + rng() % 100000;  // own block
    if (i % 777 == 0) n = 1;
    const bool aligned = rng() % 2 == 0;
    char* p = aligned ? arena.allocate_aligned(n) : arena.allocate(n);
    REQUIRE(p != nullptr);
    if (aligned) CHECK(reinterpret_cast<uintptr_t>(p) % Arena::kAlignment == 0);
    // Fill with a pattern unique to this allocation; checked below for overlaps.
    std::memset(p, static_cast<int>(i & 0xff), n);
    allocs.emplace_back(p, n);
    total += n;
    CHECK(arena.memory_usage() >= total);
  }
  for (size_t i = 0; i < allocs.size(); ++i) {
    const auto [p, n] = allocs[i];
    for (size_t j = 0; j < n; ++j) {
      if (static_cast<unsigned char>(p[j]) != (i & 0xff))
        FAIL("allocation " << i << " overwritten");
    }
  }
  // Small allocations waste little: usage stays within a small factor of what was asked.
  CHECK(arena.memory_usage() < total * 2 + Arena::kBlockSize);
}

TEST_CASE("an arena takes every block from its source and gives each back once", "[arena]") {
  auto blocks = std::make_shared<testing::CountingBlocks>();
  {
    Arena arena(4096, 0, blocks);
    std::vector<std::pair<char*, size_t>> allocs;
    for (size_t i = 0; i < 400; ++i) {
      const size_t n = i % 50 == 0 ? 3000 : 1 + i % 300;  // 3000 > a quarter block: its own
      char* p = i % 2 == 0 ? arena.allocate(n) : arena.allocate_aligned(n);
      allocs.emplace_back(p, n);
    }
    for (const auto& [p, n] : allocs) CHECK(blocks->owns(p, n));
    CHECK(blocks->allocations() == blocks->live_blocks());
    // 8 big ones of their own and the small ones' 4 KiB blocks.
    CHECK(blocks->live_blocks() > 8);
    CHECK(arena.memory_usage() ==
          blocks->live_bytes() + blocks->live_blocks() * Arena::kBlockOverhead);
  }
  CHECK(blocks->live_blocks() == 0);
  CHECK(blocks->bad_releases() == 0);
  CHECK(blocks.use_count() == 1);  // the arena let go of its source
}

TEST_CASE("an arena fills the buffer it starts with before taking a block", "[arena]") {
  alignas(Arena::kAlignment) char initial[256];
  Arena arena(Arena::kMinBlockSize, 0, initial, sizeof(initial));
  char* a = arena.allocate(100);
  char* b = arena.allocate_aligned(100);
  CHECK(a == initial);
  CHECK(b >= initial + 100);
  CHECK(b + 100 <= initial + sizeof(initial));
  CHECK(reinterpret_cast<uintptr_t>(b) % Arena::kAlignment == 0);
  CHECK(arena.memory_usage() == 0);  // the buffer is its owner's
  char* c = arena.allocate(100);     // no room left: the first block
  CHECK((c < initial || c >= initial + sizeof(initial)));
  CHECK(arena.memory_usage() >= Arena::kMinBlockSize);
}
