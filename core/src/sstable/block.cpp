#include "sstable/block.h"

#include <algorithm>
#include <cassert>
#include <memory>

#include "format/internal_key.h"
#include "util/coding.h"

namespace skv {

namespace {

Status block_corruption(std::string_view file, const char* what, uint64_t offset) {
  std::string msg(file);
  msg += ": ";
  msg += what;
  msg += " at offset ";
  msg += std::to_string(offset);
  return Status::corruption(msg);
}

// Decodes an entry header at [p, limit). Returns the start of the key delta, or nullptr if the
// header is malformed or the delta and value do not fit before `limit`.
const char* decode_entry(const char* p, const char* limit, uint32_t* shared, uint32_t* non_shared,
                         uint32_t* value_len) {
  if ((p = decode_varint32(p, limit, shared)) == nullptr) return nullptr;
  if ((p = decode_varint32(p, limit, non_shared)) == nullptr) return nullptr;
  if ((p = decode_varint32(p, limit, value_len)) == nullptr) return nullptr;
  const uint64_t need = uint64_t{*non_shared} + *value_len;
  if (need > static_cast<uint64_t>(limit - p)) return nullptr;
  return p;
}

}  // namespace

Result<std::shared_ptr<const Block>> Block::create(BlockContents contents, std::string_view file,
                                                   uint64_t offset) {
  const size_t size = contents.size;
  if (size < 4 || size > kMaxBlockSize) {
    return block_corruption(file, "bad block size", offset);
  }
  const char* d = contents.data.get();
  const uint32_t n = decode_fixed32(d + size - 4);
  if (n == 0 || n > (size - 4) / 4) {
    return block_corruption(file, "bad restart count in block", offset);
  }
  const uint32_t restarts_offset = static_cast<uint32_t>(size - 4 - size_t{n} * 4);
  uint32_t prev = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t r = decode_fixed32(d + restarts_offset + size_t{i} * 4);
    const bool ok = i == 0 ? r == 0 : (r > prev && r < restarts_offset);
    if (!ok) return block_corruption(file, "bad restart array in block", offset);
    prev = r;
  }
  // One pass over the entries, so iterators can trust the layout: every restart point is the
  // start of an entry with no shared prefix, entries tile [0, restarts_offset) exactly, and no
  // entry shares more than the previous key had. (A restart inside an entry would let a seek
  // decode bytes the forward walk never yields.)
  {
    const char* limit = d + restarts_offset;
    const char* p = d;
    uint32_t next_restart = 0;  // index into the restart array
    // Where restart `next_restart` points (past every entry once all are passed).
    uint32_t next_restart_at = 0;
    uint64_t prev_key_len = 0;
    while (p < limit) {
      const uint32_t at = static_cast<uint32_t>(p - d);
      const bool is_restart = next_restart_at == at;
      if (next_restart_at < at) {
        return block_corruption(file, "restart point inside an entry in block", offset);
      }
      uint32_t shared = 0, non_shared = 0, value_len = 0;
      const char* q = decode_entry(p, limit, &shared, &non_shared, &value_len);
      if (q == nullptr || shared > prev_key_len || (is_restart && shared != 0)) {
        return block_corruption(file, "bad entry in block", offset);
      }
      if (is_restart) {
        ++next_restart;
        next_restart_at = next_restart < n
                              ? decode_fixed32(d + restarts_offset + size_t{next_restart} * 4)
                              : restarts_offset;
      }
      prev_key_len = uint64_t{shared} + non_shared;
      p = q + non_shared + value_len;
    }
    if (next_restart != n && !(restarts_offset == 0 && n == 1)) {
      return block_corruption(file, "restart point past the last entry in block", offset);
    }
  }
  std::shared_ptr<Block> b(new Block());
  b->contents_ = std::move(contents);
  b->restarts_offset_ = restarts_offset;
  b->num_restarts_ = n;
  b->build_restart_words();
  return std::shared_ptr<const Block>(std::move(b));
}

namespace {

// The 8 bytes of `key` from `from` on, big-endian, with zeros past its end. For keys that share
// their first `from` bytes, word(a) < word(b) implies a < b (a zero past the end of the shorter
// key is never above the other key's byte there, and a key sorts before its extensions).
uint64_t word_after(std::string_view key, size_t from) {
  uint64_t w = 0;
  for (size_t j = from; j < from + 8; ++j) {
    w = (w << 8) | (j < key.size() ? static_cast<unsigned char>(key[j]) : 0u);
  }
  return w;
}

}  // namespace

void Block::build_restart_words() {
  const char* d = contents_.data.get();
  const char* limit = d + restarts_offset_;
  // The user key of restart i, or nothing when its key is too short to be an internal key (then
  // the block gets no words, and seeks decode restart keys, reporting such a key as corruption).
  auto user_key = [&](uint32_t i, std::string_view* out) {
    uint32_t shared = 0, non_shared = 0, value_len = 0;
    const char* p = decode_entry(d + restart_point(i), limit, &shared, &non_shared, &value_len);
    if (p == nullptr || shared != 0 || non_shared < kInternalKeySuffix) return false;
    *out = std::string_view(p, non_shared - kInternalKeySuffix);
    return true;
  };
  if (restarts_offset_ == 0) return;  // no entries
  std::string_view first;
  if (!user_key(0, &first)) return;
  size_t common = first.size();
  for (uint32_t i = 1; i < num_restarts_ && common > 0; ++i) {
    std::string_view k;
    if (!user_key(i, &k)) return;
    common = static_cast<size_t>(
        std::mismatch(first.begin(), first.begin() + static_cast<long>(std::min(common, k.size())),
                      k.begin())
            .first -
        first.begin());
  }
  auto words = std::make_unique<uint64_t[]>(num_restarts_);
  for (uint32_t i = 0; i < num_restarts_; ++i) {
    std::string_view k;
    if (!user_key(i, &k)) return;
    words[i] = word_after(k, common);
  }
  words_ = std::move(words);
  common_offset_ = static_cast<uint32_t>(first.data() - d);
  common_size_ = static_cast<uint32_t>(common);
}

void Block::seek_bounds(std::string_view target, uint32_t* lo, uint32_t* hi) const {
  *lo = 0;
  *hi = num_restarts_;
  if (!words_) return;
  // Below or above the shared prefix: below or above every restart key.
  const std::string_view common(contents_.data.get() + common_offset_, common_size_);
  const int c = target.compare(0, common.size(), common);
  if (c < 0) {  // also when target is a proper prefix of `common`
    *hi = 0;
    return;
  }
  if (c > 0) {
    *lo = num_restarts_;
    return;
  }
  const uint64_t t = word_after(target, common.size());
  const uint64_t* begin = words_.get();
  const uint64_t* end = begin + num_restarts_;
  const uint64_t* first_tie = std::lower_bound(begin, end, t);
  *lo = static_cast<uint32_t>(first_tie - begin);
  *hi = static_cast<uint32_t>(std::upper_bound(first_tie, end, t) - begin);
}

uint32_t Block::restart_point(uint32_t i) const {
  assert(i < num_restarts_);
  return decode_fixed32(contents_.data.get() + restarts_offset_ + size_t{i} * 4);
}

BlockIterator::BlockIterator(std::shared_ptr<const Block> block, std::string_view file,
                             uint64_t block_offset)
    : block_(std::move(block)),
      file_(file),
      block_offset_(block_offset),
      data_(block_->data().data()),
      restarts_offset_(block_->restarts_offset()),
      num_restarts_(block_->num_restarts()),
      current_(restarts_offset_),
      restart_index_(num_restarts_) {}

void BlockIterator::set_invalid() {
  current_ = restarts_offset_;
  next_ = restarts_offset_;
  restart_index_ = num_restarts_;
  key_.clear();
  value_ = {};
}

void BlockIterator::corrupt(const char* what, uint32_t entry_offset) {
  set_invalid();
  if (status_.ok()) {
    std::string msg(file_);
    msg += ": ";
    msg += what;
    msg += " in block at offset ";
    msg += std::to_string(block_offset_);
    msg += " (entry at block offset ";
    msg += std::to_string(entry_offset);
    msg += ")";
    status_ = Status::corruption(msg);
  }
}

void BlockIterator::seek_to_restart(uint32_t index) {
  key_.clear();
  value_ = {};
  restart_index_ = index;
  next_ = block_->restart_point(index);
}

bool BlockIterator::parse_next_entry() {
  if (!status_.ok()) return false;
  current_ = next_;
  if (current_ >= restarts_offset_) {
    set_invalid();
    return false;
  }
  const char* p = data_ + current_;
  const char* limit = data_ + restarts_offset_;
  uint32_t shared = 0, non_shared = 0, value_len = 0;
  p = decode_entry(p, limit, &shared, &non_shared, &value_len);
  if (p == nullptr || shared > key_.size()) {
    corrupt("bad entry", current_);
    return false;
  }
  while (restart_index_ + 1 < num_restarts_ &&
         block_->restart_point(restart_index_ + 1) <= current_) {
    ++restart_index_;
  }
  if (shared != 0 && block_->restart_point(restart_index_) == current_) {
    corrupt("restart entry with a shared prefix", current_);
    return false;
  }
  key_.truncate(shared);
  key_.append(p, non_shared);
  if (key_.size() < kInternalKeySuffix) {
    corrupt("internal key too short", current_);
    return false;
  }
  value_ = std::string_view(p + non_shared, value_len);
  next_ = static_cast<uint32_t>(p + non_shared + value_len - data_);
  return true;
}

bool BlockIterator::restart_key(uint32_t index, std::string_view* key) {
  const uint32_t off = block_->restart_point(index);
  uint32_t shared = 0, non_shared = 0, value_len = 0;
  const char* p =
      decode_entry(data_ + off, data_ + restarts_offset_, &shared, &non_shared, &value_len);
  if (p == nullptr || shared != 0 || non_shared < kInternalKeySuffix) {
    corrupt("bad restart entry", off);
    return false;
  }
  *key = std::string_view(p, non_shared);
  return true;
}

void BlockIterator::seek_first() {
  if (!status_.ok()) return;
  seek_to_restart(0);
  parse_next_entry();
}

void BlockIterator::seek_last() {
  if (!status_.ok()) return;
  seek_to_restart(num_restarts_ - 1);
  while (parse_next_entry() && next_ < restarts_offset_) {
  }
}

void BlockIterator::seek(std::string_view target) {
  assert(target.size() >= kInternalKeySuffix);
  if (!status_.ok()) return;
  // Find the first restart whose key is >= target (restart words narrow the range, keys decide
  // within it); the answer lies in the run of the restart before it, or at its start. Restart 0
  // is never compared: a seek that stops before restart 1 starts from it either way.
  uint32_t lo = 0, hi = 0;
  block_->seek_bounds(extract_user_key(target), &lo, &hi);
  lo = std::max<uint32_t>(lo, 1);
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    std::string_view k;
    if (!restart_key(mid, &k)) return;
    if (compare_internal_keys(k, target) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  seek_to_restart(lo - 1);
  while (parse_next_entry()) {
    if (compare_internal_keys(key_, target) >= 0) return;
  }
}

void BlockIterator::next() {
  assert(valid());
  parse_next_entry();
}

void BlockIterator::prev() {
  assert(valid());
  const uint32_t original = current_;
  // Back up to the last restart strictly before the current entry.
  while (block_->restart_point(restart_index_) >= original) {
    if (restart_index_ == 0) {
      set_invalid();
      return;
    }
    --restart_index_;
  }
  seek_to_restart(restart_index_);
  // Walk forward to the entry that ends where the original one starts.
  while (parse_next_entry() && next_ < original) {
  }
}

}  // namespace skv
