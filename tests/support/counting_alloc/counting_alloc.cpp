#include "support/counting_alloc/counting_alloc.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace skv::testing {
namespace {

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};
std::atomic<uint64_t> g_allocated{0};
std::atomic<uint64_t> g_allocations{0};

// Every block starts with a header that records the size asked for; the header is a multiple of
// the block's alignment, so the pointer handed out keeps it.
constexpr size_t kHeader = alignof(std::max_align_t);

void note_allocation(size_t n) {
  const size_t live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  g_allocated.fetch_add(n, std::memory_order_relaxed);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
}

void* allocate(size_t n, size_t align) {
  const size_t header = align > kHeader ? align : kHeader;
  void* base = nullptr;
  if (align > kHeader) {
    // aligned_alloc wants a size that is a multiple of the alignment.
    const size_t total = (header + n + align - 1) / align * align;
    base = std::aligned_alloc(align, total);
  } else {
    base = std::malloc(header + n);
  }
  if (base == nullptr) return nullptr;
  char* p = static_cast<char*>(base) + header;
  reinterpret_cast<size_t*>(p)[-1] = n;
  reinterpret_cast<size_t*>(p)[-2] = header;
  note_allocation(n);
  return p;
}

void release(void* ptr) {
  if (ptr == nullptr) return;
  char* p = static_cast<char*>(ptr);
  const size_t n = reinterpret_cast<size_t*>(p)[-1];
  const size_t header = reinterpret_cast<size_t*>(p)[-2];
  g_live.fetch_sub(n, std::memory_order_relaxed);
  std::free(p - header);
}

void* allocate_or_throw(size_t n, size_t align) {
  void* p = allocate(n == 0 ? 1 : n, align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

AllocationCounts allocation_counts() {
  AllocationCounts c;
  c.live_bytes = g_live.load(std::memory_order_relaxed);
  c.peak_live_bytes = g_peak.load(std::memory_order_relaxed);
  c.allocated_bytes = g_allocated.load(std::memory_order_relaxed);
  c.allocations = g_allocations.load(std::memory_order_relaxed);
  return c;
}

void reset_peak() { g_peak.store(g_live.load(std::memory_order_relaxed)); }

}  // namespace skv::testing

using skv::testing::allocate;
using skv::testing::allocate_or_throw;
using skv::testing::release;

void* operator new(size_t n) { return allocate_or_throw(n, 0); }
void* operator new[](size_t n) { return allocate_or_throw(n, 0); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n == 0 ? 1 : n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return allocate(n == 0 ? 1 : n, 0);
}
void* operator new(size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<size_t>(a));
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n == 0 ? 1 : n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n == 0 ? 1 : n, static_cast<size_t>(a));
}

void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, size_t) noexcept { release(p); }
void operator delete[](void* p, size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
