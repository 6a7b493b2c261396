// skv-test-modules: util
// ByteBuffer (util/byte_buffer.h) against std::string: after any mix of truncate, append and
// assign, of every length up to past the inline copies' 32 bytes and at every starting offset,
// the buffer holds the same bytes, including across growth.

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <string_view>

#include "util/byte_buffer.h"

using namespace skv;

namespace {

std::string random_bytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

}  // namespace

TEST_CASE("ByteBuffer appends every length at every offset as std::string does", "[util]") {
  std::mt19937 rng(11);
  for (size_t prefix = 0; prefix <= 40; ++prefix) {
    for (size_t n = 0; n <= 80; ++n) {
      const std::string head = random_bytes(rng, prefix);
      const std::string tail = random_bytes(rng, n);
      ByteBuffer b;
      b.append(head.data(), head.size());
      b.append(tail.data(), tail.size());
      INFO("prefix " << prefix << ", appended " << n);
      REQUIRE(b.size() == prefix + n);
      REQUIRE(b.view() == head + tail);
    }
  }
}

TEST_CASE("ByteBuffer keeps the truncated prefix and the new bytes over many steps", "[util]") {
  std::mt19937 rng(12);
  ByteBuffer b;
  std::string model;
  for (int step = 0; step < 20000; ++step) {
    switch (rng() % 3) {
      case 0: {  // a block entry: keep a shared prefix, add the rest
        const size_t keep = model.empty() ? 0 : rng() % (model.size() + 1);
        const std::string more = random_bytes(rng, rng() % 48);
        b.truncate(keep);
        b.append(more.data(), more.size());
        model.resize(keep);
        model += more;
        break;
      }
      case 1: {  // a saved key
        const std::string s = random_bytes(rng, rng() % 70);
        b.assign(s);
        model = s;
        break;
      }
      default: {  // a long value now and then, to make it grow
        const std::string s = random_bytes(rng, rng() % 600);
        b.append(s.data(), s.size());
        model += s;
        if (model.size() > 4096) {
          b.clear();
          model.clear();
        }
      }
    }
    REQUIRE(b.view() == model);
  }
}
