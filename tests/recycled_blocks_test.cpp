// skv-test-modules: memtable
// RecycledBlocks: blocks of the source's preferred size that memtables give back are handed to
// later allocations of that size, up to the byte limit; everything else goes to the source.

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "memtable/arena.h"
#include "memtable/recycled_blocks.h"

using namespace skv;

namespace {

// Heap blocks with a preferred size, counting what goes through.
class CountingBlocks final : public MemoryBlocks {
 public:
  explicit CountingBlocks(size_t preferred) : preferred_(preferred) {}
  size_t preferred_block_size() const override { return preferred_; }
  char* allocate(size_t bytes) override {
    ++allocations;
    live += bytes;
    return new char[bytes];
  }
  void release(char* block, size_t bytes) noexcept override {
    ++releases;
    live -= bytes;
    delete[] block;
  }
  int allocations = 0;
  int releases = 0;
  size_t live = 0;

 private:
  const size_t preferred_;
};

}  // namespace

TEST_CASE("released blocks of the preferred size are reused up to the limit", "[memtable]") {
  auto source = std::make_shared<CountingBlocks>(4096);
  {
    RecycledBlocks blocks(source, 2 * 4096);  // keeps two
    CHECK(blocks.preferred_block_size() == 4096);
    std::vector<char*> got;
    for (int i = 0; i < 3; ++i) got.push_back(blocks.allocate(4096));
    CHECK(source->allocations == 3);
    std::memset(got[0], 'x', 4096);
    for (char* b : got) blocks.release(b, 4096);
    CHECK(source->releases == 1);  // the third is past the limit
    CHECK(blocks.kept_bytes() == 2 * 4096);

    // The next two come from what was kept, with no call to the source.
    char* a = blocks.allocate(4096);
    char* b = blocks.allocate(4096);
    CHECK(source->allocations == 3);
    CHECK(((a == got[0] || a == got[1]) && (b == got[0] || b == got[1]) && a != b));
    CHECK(blocks.kept_bytes() == 0);
    char* c = blocks.allocate(4096);  // none left: the source's
    CHECK(source->allocations == 4);

    // Other sizes pass through both ways.
    char* big = blocks.allocate(3 * 4096);
    CHECK(source->allocations == 5);
    blocks.release(big, 3 * 4096);
    CHECK(source->releases == 2);
    CHECK(blocks.kept_bytes() == 0);

    blocks.release(a, 4096);
    blocks.release(b, 4096);
    blocks.release(c, 4096);
    CHECK(source->releases == 3);
    CHECK(blocks.kept_bytes() == 2 * 4096);
  }
  // Destroyed: what it kept went back.
  CHECK(source->releases == 5);
  CHECK(source->live == 0);
}

TEST_CASE("a source with no preferred size keeps nothing", "[memtable]") {
  auto source = std::make_shared<CountingBlocks>(0);
  RecycledBlocks blocks(source, 1 << 20);
  CHECK(blocks.preferred_block_size() == 0);
  char* a = blocks.allocate(4096);
  blocks.release(a, 4096);
  CHECK(source->releases == 1);
  CHECK(blocks.kept_bytes() == 0);
}

TEST_CASE("an arena after another takes its blocks from the first one's", "[memtable]") {
  auto source = std::make_shared<CountingBlocks>(Arena::kMinBlockSize * 4);
  auto blocks = std::make_shared<RecycledBlocks>(source, 64 * Arena::kMinBlockSize);
  const size_t block = Arena::kMinBlockSize * 4;
  {
    Arena first(block, 0, blocks);
    for (int i = 0; i < 64; ++i) first.allocate_aligned(block / 8);  // eight blocks' worth
  }
  const int fresh = source->allocations;
  CHECK(fresh >= 8);
  CHECK(blocks->kept_bytes() == static_cast<size_t>(fresh) * block);
  {
    Arena second(block, 0, blocks);
    for (int i = 0; i < 64; ++i) second.allocate_aligned(block / 8);
    CHECK(source->allocations == fresh);  // all from the first arena's
  }
  blocks.reset();
  CHECK(source->live == 0);
}
