#include "sstable/bloom.h"

#include <algorithm>

#include "util/coding.h"

namespace skv {

namespace {

constexpr uint64_t kMul = 0x9ddfea08eb382d69ull;
constexpr uint64_t kSeed = 0x2545f4914f6cdd1dull;

inline uint64_t rotr64(uint64_t v, int r) { return (v >> r) | (v << (64 - r)); }

// Final avalanche: every input bit affects every output bit.
inline uint64_t finalize(uint64_t h) {
  h ^= h >> 31;
  h *= 0x7fb5d329728ea185ull;
  h ^= h >> 27;
  h *= 0x81dadef4bc2dd44dull;
  h ^= h >> 33;
  return h;
}

inline uint64_t mix_word(uint64_t w) {
  w *= kMul;
  w ^= w >> 43;
  w *= kMul;
  return w;
}

}  // namespace

uint64_t bloom_hash(std::string_view key) {
  const char* p = key.data();
  size_t n = key.size();
  uint64_t h = kSeed ^ (static_cast<uint64_t>(n) * kMul);
  while (n >= 8) {
    h ^= mix_word(decode_fixed64(p));
    h = rotr64(h, 29) * 5 + 0x52dce729;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t tail = 0;
    for (size_t i = 0; i < n; ++i) {
      tail |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    }
    h ^= mix_word(tail ^ (static_cast<uint64_t>(n) << 59));
  }
  return finalize(h);
}

int bloom_num_probes(int bits_per_key) {
  int k = (bits_per_key * 69 + 50) / 100;
  return std::clamp(k, 1, 30);
}

uint64_t bloom_max_filter_bytes(uint64_t keys) {
  constexpr uint64_t kMaxKeys = UINT64_MAX / kMaxBloomBitsPerKey;
  const uint64_t bits = keys > kMaxKeys ? UINT64_MAX - 7 : keys * kMaxBloomBitsPerKey;
  return (std::max<uint64_t>(bits, 64) + 7) / 8 + 1;  // the bit array and num_probes
}

BloomFilterBuilder::BloomFilterBuilder(int bits_per_key)
    : bits_per_key_(std::clamp(bits_per_key, 1, kMaxBloomBitsPerKey)) {}

void BloomFilterBuilder::finish(std::string* dst) const {
  uint64_t bits = static_cast<uint64_t>(hashes_.size()) * static_cast<uint64_t>(bits_per_key_);
  bits = std::max<uint64_t>(bits, 64);
  const uint64_t bytes = (bits + 7) / 8;
  bits = bytes * 8;
  const int k = bloom_num_probes(bits_per_key_);
  const size_t start = dst->size();
  dst->resize(start + static_cast<size_t>(bytes), '\0');
  char* array = dst->data() + start;
  for (uint64_t h : hashes_) {
    const uint64_t delta = rotr64(h, 33) | 1;
    uint64_t pos = h;
    for (int i = 0; i < k; ++i) {
      const uint64_t b = pos % bits;
      array[b / 8] = static_cast<char>(static_cast<unsigned char>(array[b / 8]) | (1u << (b % 8)));
      pos += delta;
    }
  }
  dst->push_back(static_cast<char>(k));
}

bool BloomFilter::parse(std::string_view data) {
  if (data.size() < 2) return false;
  const int k = static_cast<unsigned char>(data.back());
  if (k < 1 || k > 30) return false;
  bits_ = data.substr(0, data.size() - 1);
  num_probes_ = k;
  return true;
}

bool BloomFilter::may_contain(std::string_view key) const {
  if (num_probes_ == 0) return true;
  const uint64_t bits = static_cast<uint64_t>(bits_.size()) * 8;
  const uint64_t h = bloom_hash(key);
  const uint64_t delta = rotr64(h, 33) | 1;
  uint64_t pos = h;
  for (int i = 0; i < num_probes_; ++i) {
    const uint64_t b = pos % bits;
    if ((static_cast<unsigned char>(bits_[b / 8]) & (1u << (b % 8))) == 0) return false;
    pos += delta;
  }
  return true;
}

}  // namespace skv
