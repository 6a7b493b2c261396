#include "cache/block_buffer_pool.h"

#include <new>
#include <utility>

namespace skv {

BlockBuffer& BlockBuffer::operator=(BlockBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    pool_ = std::exchange(other.pool_, nullptr);
    size_class_ = std::exchange(other.size_class_, 0);
  }
  return *this;
}

BlockBuffer BlockBuffer::allocate(size_t bytes, BlockBufferPool* pool) {
  if (bytes == 0) bytes = 1;
  if (pool != nullptr) return pool->allocate(bytes);
  BlockBuffer b;
  b.data_ = new char[bytes];
  b.capacity_ = bytes;
  return b;
}

void BlockBuffer::reset() noexcept {
  if (data_ == nullptr) return;
  if (size_class_ != 0) {
    pool_->free(data_, size_class_);
  } else {
    delete[] data_;
  }
  data_ = nullptr;
  capacity_ = 0;
  pool_ = nullptr;
  size_class_ = 0;
}

void BlockBufferPool::Retire::operator()(BlockBufferPool* pool) const noexcept { pool->unref(); }

BlockBufferPool::Handle BlockBufferPool::create(std::shared_ptr<MemoryBlocks> source,
                                                size_t max_bytes) {
  if (source == nullptr) return nullptr;
  const size_t chunk = source->preferred_block_size();
  if (chunk < kClasses * kClassBytes || max_bytes / 2 < chunk) return nullptr;
  return Handle(new BlockBufferPool(std::move(source), chunk, max_bytes));
}

BlockBufferPool::BlockBufferPool(std::shared_ptr<MemoryBlocks> source, size_t chunk,
                                 size_t max_bytes)
    : source_(std::move(source)), chunk_(chunk), max_bytes_(max_bytes) {}

BlockBufferPool::~BlockBufferPool() {
  for (char* c : chunks_) source_->release(c, chunk_);
}

void BlockBufferPool::unref() noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

char* BlockBufferPool::take_chunk() {
  std::lock_guard<std::mutex> l(chunks_mu_);
  if ((chunks_.size() + 1) * chunk_ > max_bytes_) return nullptr;
  chunks_.reserve(chunks_.size() + 1);
  char* c = nullptr;
  try {
    c = source_->allocate(chunk_);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  chunks_.push_back(c);
  return c;
}

BlockBuffer BlockBufferPool::allocate(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const size_t size_class = (bytes + kClassBytes - 1) / kClassBytes;
  char* data = nullptr;
  if (size_class <= kClasses) {
    SizeClass& k = classes_[size_class];
    const size_t slot = size_class * kClassBytes;
    std::lock_guard<std::mutex> l(k.mu);
    if (!k.free.empty()) {
      data = k.free.back();
      k.free.pop_back();
    } else {
      if (k.left < slot) {
        if (char* c = take_chunk()) {
          k.next = c;
          k.left = chunk_;
        }
      }
      if (k.left >= slot) {
        // Room for every carved buffer to come back, so free() never allocates.
        k.free.reserve(k.carved + 1);
        ++k.carved;
        data = k.next;
        k.next += slot;
        k.left -= slot;
      }
    }
  }
  if (data == nullptr) {
    heap_fallback_bytes_.fetch_add(bytes, std::memory_order_relaxed);
    return BlockBuffer::allocate(bytes, nullptr);
  }
  refs_.fetch_add(1, std::memory_order_relaxed);
  BlockBuffer b;
  b.data_ = data;
  b.capacity_ = size_class * kClassBytes;
  b.pool_ = this;
  b.size_class_ = static_cast<uint32_t>(size_class);
  return b;
}

void BlockBufferPool::free(char* data, uint32_t size_class) noexcept {
  {
    SizeClass& k = classes_[size_class];
    std::lock_guard<std::mutex> l(k.mu);
    k.free.push_back(data);  // capacity reserved when the buffer was carved
  }
  unref();
}

size_t BlockBufferPool::chunk_bytes() const {
  std::lock_guard<std::mutex> l(chunks_mu_);
  return chunks_.size() * chunk_;
}

uint64_t BlockBufferPool::heap_fallback_bytes() const {
  return heap_fallback_bytes_.load(std::memory_order_relaxed);
}

}  // namespace skv
