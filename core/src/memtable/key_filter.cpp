#include "memtable/key_filter.h"

#include "sstable/bloom.h"

namespace skv {

KeyFilter::KeyFilter(size_t bytes) : num_lines_((bytes + kLineBytes - 1) / kLineBytes) {
  // std::atomic's default constructor zero-initialises (C++20).
  if (num_lines_ > 0) lines_ = std::make_unique<Line[]>(num_lines_);
}

KeyFilter::Probe KeyFilter::probe(std::string_view user_key) const {
  const uint64_t h = bloom_hash(user_key);
  Probe p{};
  // The high half picks the line (a multiply, not a modulo); a remix of the whole hash gives
  // kProbes bit positions of 9 bits each (a line has 512 bits).
  p.line = static_cast<size_t>(((h >> 32) * static_cast<uint64_t>(num_lines_)) >> 32);
  uint64_t g = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
  g ^= g >> 32;
  for (int i = 0; i < kProbes; ++i) {
    const unsigned bit = static_cast<unsigned>(g >> (9 * i)) & 511u;
    p.masks[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
  return p;
}

void KeyFilter::add(std::string_view user_key) {
  if (num_lines_ == 0) return;
  const Probe p = probe(user_key);
  Line& line = lines_[p.line];
  for (size_t w = 0; w < kLineBytes / 8; ++w) {
    if (p.masks[w] == 0) continue;
    // Most keys of a full filter find their bits set already: skip the locked write then.
    if ((line.words[w].load(std::memory_order_relaxed) & p.masks[w]) == p.masks[w]) continue;
    line.words[w].fetch_or(p.masks[w], std::memory_order_relaxed);
  }
}

bool KeyFilter::may_contain(std::string_view user_key) const {
  if (num_lines_ == 0) return true;
  const Probe p = probe(user_key);
  const Line& line = lines_[p.line];
  for (size_t w = 0; w < kLineBytes / 8; ++w) {
    if (p.masks[w] == 0) continue;
    if ((line.words[w].load(std::memory_order_relaxed) & p.masks[w]) != p.masks[w]) return false;
  }
  return true;
}

}  // namespace skv
