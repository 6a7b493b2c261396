// skv-test-modules: util
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "format/file_header.h"
#include "format/internal_key.h"
#include "util/coding.h"
#include "util/crc32c.h"

using namespace skv;

TEST_CASE("fixed-width integers round-trip little-endian", "[coding]") {
  std::string s;
  put_fixed32(&s, 0x04030201u);
  put_fixed64(&s, 0x0807060504030201ull);
  REQUIRE(s.size() == 12);
  CHECK(s[0] == 1);
  CHECK(s[3] == 4);
  CHECK(s[4] == 1);
  CHECK(decode_fixed32(s.data()) == 0x04030201u);
  CHECK(decode_fixed64(s.data() + 4) == 0x0807060504030201ull);
}

TEST_CASE("varints round-trip and reject truncated or overlong input", "[coding]") {
  std::mt19937_64 rng(7);
  std::string s;
  std::vector<uint64_t> values = {0, 1, 127, 128, 255, 300, 16383, 16384, UINT32_MAX, UINT64_MAX};
  for (int i = 0; i < 1000; ++i) values.push_back(rng() >> (rng() % 64));
  for (uint64_t v : values) put_varint64(&s, v);
  std::string_view in = s;
  for (uint64_t v : values) {
    uint64_t got = 0;
    REQUIRE(get_varint64(&in, &got));
    CHECK(got == v);
  }
  CHECK(in.empty());

  std::string big;
  put_varint64(&big, UINT64_MAX);
  std::string_view trunc(big.data(), big.size() - 1);
  uint64_t v = 0;
  CHECK_FALSE(get_varint64(&trunc, &v));
  std::string overlong(11, '\xff');
  std::string_view ol = overlong;
  CHECK_FALSE(get_varint64(&ol, &v));
  std::string v32;
  put_varint64(&v32, uint64_t{1} << 33);
  std::string_view in32 = v32;
  uint32_t small = 0;
  CHECK_FALSE(get_varint32(&in32, &small));
}

TEST_CASE("length-prefixed slices never read past the input", "[coding]") {
  std::string s;
  put_length_prefixed(&s, "hello");
  std::string_view in = s, out;
  REQUIRE(get_length_prefixed(&in, &out));
  CHECK(out == "hello");
  std::string_view cut(s.data(), s.size() - 1);
  CHECK_FALSE(get_length_prefixed(&cut, &out));
}

TEST_CASE("crc32c matches the standard check values", "[crc32c]") {
  CHECK(crc32c::value("123456789", 9) == 0xe3069283u);
  std::string zeros(32, '\0');
  CHECK(crc32c::value(zeros.data(), zeros.size()) == 0x8a9136aau);
  std::string ff(32, '\xff');
  CHECK(crc32c::value(ff.data(), ff.size()) == 0x62a8ab43u);
  // extend() over pieces equals value() over the whole.
  std::string text = "the quick brown fox jumps over the lazy dog";
  uint32_t whole = crc32c::value(text.data(), text.size());
  uint32_t part =
      crc32c::extend(crc32c::value(text.data(), 10), text.data() + 10, text.size() - 10);
  CHECK(whole == part);
  CHECK(crc32c::unmask(crc32c::mask(whole)) == whole);
  CHECK(crc32c::mask(whole) != whole);
}

namespace {

// `n` bytes of a xorshift sequence from `seed`: data without the runs a CRC might pass by luck.
std::string xorshift_bytes(size_t n, uint64_t seed) {
  std::string data(n, '\0');
  for (char& c : data) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    c = static_cast<char>(seed);
  }
  return data;
}

}  // namespace

TEST_CASE("crc32c: the CPU path and the table path agree", "[crc32c]") {
  CHECK(crc32c::extend_portable(0, "123456789", 9) == 0xe3069283u);
  // Every length 0..300 at every alignment 0..7, continued from a non-zero CRC.
  const std::string data = xorshift_bytes(400, 0x9e3779b97f4a7c15ull);
  for (size_t align = 0; align < 8; ++align) {
    for (size_t n = 0; n <= 300; ++n) {
      const char* p = data.data() + align;
      INFO("align " << align << " length " << n);
      REQUIRE(crc32c::extend(0x12345678u, p, n) == crc32c::extend_portable(0x12345678u, p, n));
    }
  }
}

TEST_CASE("crc32c: long buffers, checked in three stripes, agree with the table path", "[crc32c]") {
  // The CPU path cuts buffers of 768 bytes and more into three stripes (of 2,048 bytes from
  // 6,144 on, else of 256) and joins their CRCs: every length around those edges, and a few
  // block-sized ones, at several alignments, each from a non-zero CRC and from zero.
  const std::string data = xorshift_bytes(40000 + 8, 0x2545f4914f6cdd1dull);
  std::vector<size_t> lengths;
  for (size_t edge : {size_t{768}, size_t{1536}, size_t{6144}, size_t{12288}}) {
    for (size_t n = edge - 17; n <= edge + 17; ++n) lengths.push_back(n);
  }
  for (size_t n : {size_t{4096}, size_t{16384}, size_t{16384 + 5}, size_t{32768}, size_t{40000}}) {
    lengths.push_back(n);
  }
  for (size_t align : {size_t{0}, size_t{1}, size_t{3}, size_t{7}}) {
    for (size_t n : lengths) {
      const char* p = data.data() + align;
      INFO("align " << align << " length " << n);
      REQUIRE(crc32c::extend(0x12345678u, p, n) == crc32c::extend_portable(0x12345678u, p, n));
      REQUIRE(crc32c::value(p, n) == crc32c::extend_portable(0, p, n));
    }
  }
  // A change of one bit anywhere in a striped buffer changes the CRC.
  const uint32_t whole = crc32c::value(data.data(), 16384);
  for (size_t at : {size_t{0}, size_t{2047}, size_t{2048}, size_t{6143}, size_t{6144},
                    size_t{12288}, size_t{16383}}) {
    std::string flipped = data.substr(0, 16384);
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    INFO("bit flipped at " << at);
    CHECK(crc32c::value(flipped.data(), flipped.size()) != whole);
  }
}

TEST_CASE("internal keys order by user key then newest first", "[format]") {
  std::string a1 = make_internal_key("a", 1, ValueKind::Value, 5);
  std::string a2 = make_internal_key("a", 2, ValueKind::Delete, 1);
  std::string b1 = make_internal_key("b", 1, ValueKind::Value, 0);
  std::string a_ff = make_internal_key(std::string("a\xff", 2), 1, ValueKind::Value, 0);
  CHECK(compare_internal_keys(a2, a1) < 0);
  CHECK(compare_internal_keys(a1, b1) < 0);
  CHECK(compare_internal_keys(a1, a_ff) < 0);  // bytes compare as unsigned
  CHECK(compare_internal_keys(a_ff, b1) < 0);
  ParsedInternalKey p;
  REQUIRE(parse_internal_key(a2, &p));
  CHECK(p.user_key == "a");
  CHECK(p.sequence == 2);
  CHECK(p.kind == ValueKind::Delete);
  CHECK(p.timestamp == 1);
  CHECK_FALSE(parse_internal_key("short", &p));
  std::string bad_kind = make_internal_key("a", 1, ValueKind::Value, 0);
  bad_kind[bad_kind.size() - 16] = 9;
  CHECK_FALSE(parse_internal_key(bad_kind, &p));
}

TEST_CASE("file headers round-trip and detect damage", "[format]") {
  FileHeader h;
  h.kind = FileKind::Table;
  h.file_number = 42;
  std::string enc;
  encode_file_header(h, &enc);
  REQUIRE(enc.size() == kFileHeaderSize);
  auto d = decode_file_header(enc, FileKind::Table, "000042.sst");
  REQUIRE(d.ok());
  CHECK(d->file_number == 42);
  auto wrong_kind = decode_file_header(enc, FileKind::Wal, "000042.sst");
  CHECK(wrong_kind.status().is_corruption());
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] ^= 0x10;
    auto r = decode_file_header(bad, FileKind::Table, "000042.sst");
    INFO("flipped byte " << i);
    CHECK(r.status().is_corruption());
    CHECK(r.status().message().find("000042.sst") != std::string::npos);
  }
  CHECK(decode_file_header(enc.substr(0, 10), FileKind::Table, "x").status().is_corruption());
}
