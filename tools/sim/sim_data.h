// DataGen: the keys and values a simulation writes. Keys come from fixed pools drawn once per
// seed, so operations keep meeting the same keys (conflicts, overwrites, deletes of live keys):
// a small hot set, plain short keys, binary keys full of 0x00 and 0xff bytes, and long keys (up to
// 4 KiB) that share long prefixes; a wider numbered space makes the tree grow. Values are empty,
// small, repetitive (they compress) or multi-KiB random bytes. Small values carry the step that
// wrote them, so a stale read shows.
//
// Thread safety: one DataGen per simulation; it draws from that simulation's Rng.

#ifndef SKV_TOOLS_SIM_SIM_DATA_H_
#define SKV_TOOLS_SIM_SIM_DATA_H_

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tools/sim/sim_types.h"

namespace skv::sim {

class DataGen {
 public:
  explicit DataGen(Rng* rng) : rng_(rng) {
    hot_ = {"a", "b", "hot", std::string(1, '\0'), "\xff", "k050"};
    for (int i = 0; i < 160; ++i) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "k%03d", i);
      plain_.push_back(buf);
    }
    static const char kAlphabet[] = {'\0', '\x01', '\x7f', '\x80', '\xfe', '\xff', 'k', '0'};
    std::set<std::string> binary;
    while (binary.size() < 48) {
      std::string k(rng_->between(1, 8), '\0');
      for (char& c : k) c = kAlphabet[rng_->uniform(sizeof(kAlphabet))];
      binary.insert(std::move(k));
    }
    binary_.assign(binary.begin(), binary.end());
    // Long keys: a few long shared prefixes, told apart by their tails.
    for (int i = 0; i < 16; ++i) {
      std::string k(rng_->between(64, 4000), static_cast<char>('L' + i % 3));
      if (i % 4 == 1) k[k.size() / 2] = '\0';
      if (i % 4 == 2) k.back() = '\xff';
      k += std::to_string(i);
      long_.push_back(std::move(k));
    }
  }

  // A key: hot 30%, plain 30%, wide 10%, binary 18%, long 12%.
  std::string key() {
    uint64_t r = rng_->uniform(100);
    if (r < 30) return hot_[rng_->uniform(hot_.size())];
    if (r < 60) return plain_[rng_->uniform(plain_.size())];
    if (r < 70) {
      // A wider space that rarely repeats, so the tree grows past the pools.
      char buf[12];
      std::snprintf(buf, sizeof(buf), "w%05u", static_cast<unsigned>(rng_->uniform(4000)));
      return buf;
    }
    if (r < 88) return binary_[rng_->uniform(binary_.size())];
    return long_[rng_->uniform(long_.size())];
  }

  // A range bound: usually a pool key, sometimes a key that falls between pool keys.
  std::string bound() {
    std::string k = key();
    switch (rng_->uniform(6)) {
      case 0:
        k.push_back('\0');  // just after k
        break;
      case 1:
        if (k.size() > 1) k.pop_back();  // a prefix: just before k
        break;
      default:
        break;
    }
    return k;
  }

  // A value to write at `step`.
  std::string value(uint64_t step) {
    uint64_t r = rng_->uniform(100);
    std::string tag = "v" + std::to_string(step) + ":";
    if (r < 10) return std::string();
    if (r < 50) return tag + random_bytes(rng_->uniform(17));
    if (r < 75) {
      std::string unit = random_bytes(rng_->between(1, 8));
      size_t n = rng_->between(64, 4096);
      std::string v = tag;
      while (v.size() < n) v += unit;
      return v;
    }
    if (r < 90) return tag + random_bytes(rng_->between(100, 1000));
    return tag + random_bytes(rng_->between(1024, max_large_));
  }

  // The largest random value (8 KiB unless lowered: versioned trees keep every version of the
  // retention window, and the simulation keeps their runs about as costly as the others).
  void set_max_large_value(size_t bytes) { max_large_ = bytes; }

 private:
  std::string random_bytes(size_t n) {
    std::string out(n, '\0');
    for (size_t i = 0; i < n; i += 8) {
      uint64_t r = rng_->next();
      for (size_t j = i; j < std::min(n, i + 8); ++j, r >>= 8) out[j] = static_cast<char>(r);
    }
    return out;
  }

  Rng* rng_;
  size_t max_large_ = 8192;
  std::vector<std::string> hot_, plain_, binary_, long_;
};

}  // namespace skv::sim

#endif  // SKV_TOOLS_SIM_SIM_DATA_H_
