#include "sstable/block_builder.h"

#include <algorithm>
#include <cassert>

#include "util/coding.h"

namespace skv {

BlockBuilder::BlockBuilder(int restart_interval, size_t restart_bytes)
    : restart_interval_(std::max(restart_interval, 1)), restart_bytes_(restart_bytes) {
  reset();
}

void BlockBuilder::reset() {
  buffer_.clear();
  restarts_.clear();
  restarts_.push_back(0);
  counter_ = 0;
  num_entries_ = 0;
  finished_ = false;
  last_key_.clear();
}

void BlockBuilder::add(std::string_view key, std::string_view value) {
  assert(!finished_);
  size_t shared = 0;
  const bool full = counter_ >= restart_interval_ ||
                    (restart_bytes_ != 0 && buffer_.size() - restarts_.back() >= restart_bytes_);
  if (!full) {
    const size_t limit = std::min(last_key_.size(), key.size());
    while (shared < limit && last_key_[shared] == key[shared]) ++shared;
  } else {
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  const size_t non_shared = key.size() - shared;
  put_varint32(&buffer_, static_cast<uint32_t>(shared));
  put_varint32(&buffer_, static_cast<uint32_t>(non_shared));
  put_varint32(&buffer_, static_cast<uint32_t>(value.size()));
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());
  last_key_.resize(shared);
  last_key_.append(key.data() + shared, non_shared);
  ++counter_;
  ++num_entries_;
}

std::string_view BlockBuilder::finish() {
  if (!finished_) {
    for (uint32_t r : restarts_) put_fixed32(&buffer_, r);
    put_fixed32(&buffer_, static_cast<uint32_t>(restarts_.size()));
    finished_ = true;
  }
  return buffer_;
}

size_t BlockBuilder::size_estimate() const {
  if (finished_) return buffer_.size();
  return buffer_.size() + restarts_.size() * 4 + 4;
}

}  // namespace skv
