// skv-test-modules: util
// compare_bytes (util/bytes_compare.h) against std::string_view::compare: the same sign for every
// pair of strings, whatever their lengths (below, at and past the eight-byte words), where they
// first differ and whether the differing byte has its top bit set (bytes compare as unsigned).

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <string_view>

#include "format/internal_key.h"
#include "util/bytes_compare.h"

using namespace skv;

namespace {

int sign(int r) { return (r > 0) - (r < 0); }

void check_pair(const std::string& a, const std::string& b) {
  INFO("a size " << a.size() << ", b size " << b.size());
  CHECK(sign(compare_bytes(a, b)) == sign(std::string_view(a).compare(b)));
  CHECK(sign(compare_bytes(b, a)) == -sign(std::string_view(a).compare(b)));
}

}  // namespace

TEST_CASE("compare_bytes orders like string_view::compare at every length and position", "[util]") {
  std::mt19937 rng(7);
  for (size_t len = 0; len <= 40; ++len) {
    std::string base(len, '\0');
    for (auto& c : base) c = static_cast<char>(rng());
    check_pair(base, base);
    // One byte changed at each position, up and down, including bytes with the top bit set.
    for (size_t at = 0; at < len; ++at) {
      for (int delta : {1, -1, 0x80}) {
        std::string other = base;
        other[at] = static_cast<char>(static_cast<unsigned char>(other[at]) + delta);
        check_pair(base, other);
      }
    }
    // Prefixes: the shorter string sorts first.
    for (size_t cut = 0; cut < len; ++cut) check_pair(base.substr(0, cut), base);
  }
}

TEST_CASE("compare_bytes treats bytes as unsigned", "[util]") {
  CHECK(compare_bytes("\x7f", "\x80") < 0);
  CHECK(compare_bytes("abcdefgh\x01", "abcdefgh\xff") < 0);
  CHECK(compare_bytes("abcdefgh\xff", "abcdefgh") > 0);
  CHECK(compare_bytes("", "") == 0);
  CHECK(compare_bytes("", std::string_view("\0", 1)) < 0);
  CHECK(compare_user_keys("key\x80", "key\x7f") > 0);
}

TEST_CASE("compare_bytes agrees with string_view::compare on random strings", "[util]") {
  std::mt19937 rng(11);
  for (int i = 0; i < 20000; ++i) {
    // A shared prefix of random length, then random tails, over a small alphabet so equal bytes
    // are common.
    const size_t prefix = rng() % 24;
    std::string a(prefix, 'k');
    std::string b = a;
    for (size_t n = rng() % 12; n > 0; --n) a += static_cast<char>(0x7e + rng() % 4);
    for (size_t n = rng() % 12; n > 0; --n) b += static_cast<char>(0x7e + rng() % 4);
    check_pair(a, b);
  }
}
