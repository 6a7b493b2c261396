// ByteBuffer: a growable run of bytes for the keys an iterator rebuilds on every step (a block
// entry's prefix-compressed key, the user key a merge is skipping).
//
// It does what std::string would, but every operation is inline here: the WebAssembly build's
// std::string (libc++, whose basic_string<char> members live in the prebuilt library) makes a
// call for each resize, append or assign, and a count or a skip makes several per entry. Growth
// doubles the capacity; the bytes are never shrunk.
//
// Thread safety: a value; one thread at a time.

#ifndef SKV_UTIL_BYTE_BUFFER_H_
#define SKV_UTIL_BYTE_BUFFER_H_

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace skv {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  // The bytes; valid until the next change.
  std::string_view view() const { return {data_.get(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: used as a key everywhere
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void clear() { size_ = 0; }
  // Keeps the first n bytes. REQUIRES: n <= size().
  void truncate(size_t n) { size_ = n; }
  void append(const char* p, size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    if (n != 0) std::memcpy(data_.get() + size_, p, n);
    size_ += n;
  }
  void assign(std::string_view s) {
    size_ = 0;
    append(s.data(), s.size());
  }

 private:
  void grow(size_t need) {
    size_t capacity = capacity_ < 32 ? 32 : capacity_;
    while (capacity < need) capacity *= 2;
    std::unique_ptr<char[]> bigger(new char[capacity]);
    if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace skv

#endif  // SKV_UTIL_BYTE_BUFFER_H_
