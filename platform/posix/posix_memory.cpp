// PosixMemoryBlocks (posix_platform.h): 2 MiB-aligned mappings for the memtable's arena blocks
// and the block cache's buffer pool.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

#include "platform/posix/posix_platform.h"

namespace skv {

namespace {

bool is_mapped_size(size_t bytes) { return bytes % PosixMemoryBlocks::kHugePageSize == 0; }

}  // namespace

char* PosixMemoryBlocks::allocate(size_t bytes) {
  if (!is_mapped_size(bytes)) return new char[bytes];
  // Map one huge page more than asked and unmap what lies before the first 2 MiB boundary and
  // after the block: mmap itself only aligns to 4 KiB.
  const size_t span = bytes + kHugePageSize;
  void* mapped = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = (start + kHugePageSize - 1) & ~uintptr_t{kHugePageSize - 1};
  if (aligned > start) munmap(mapped, aligned - start);
  const uintptr_t end = aligned + bytes;
  if (start + span > end) munmap(reinterpret_cast<void*>(end), start + span - end);
  char* block = reinterpret_cast<char*>(aligned);
#ifdef MADV_HUGEPAGE
  // Advice only: it fails where the kernel has no transparent huge pages, and the block is then
  // backed by ordinary pages.
  (void)madvise(block, bytes, MADV_HUGEPAGE);
#endif
  return block;
}

void PosixMemoryBlocks::release(char* block, size_t bytes) noexcept {
  if (!is_mapped_size(bytes)) {
    delete[] block;
    return;
  }
  munmap(block, bytes);
}

}  // namespace skv
