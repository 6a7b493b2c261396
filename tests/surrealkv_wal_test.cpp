// skv-test-modules: migrate util
// skv-test-wasm: off
//
// The SurrealKV WAL segment and batch decoder (native/migrate/surrealkv/wal_reader.h): block
// framing, padding, fragments, LZ4, and batches, each failure named with file and offset.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "native/migrate/source_file.h"
#include "native/migrate/surrealkv/wal_reader.h"
#include "support/surrealkv_fixture.h"
#include "support/temp_dir.h"

namespace {

using skv::migration::SourceFile;
using skv::migration::surrealkv::Entry;
using skv::migration::surrealkv::read_wal_segment;
using namespace skv::testing::skvfix;  // NOLINT: the fixture's vocabulary

struct Decoded {
  skv::Status status;
  std::vector<Entry> entries;
};

Decoded decode(const skv::testing::TempDir& tmp, const std::string& bytes) {
  std::string path = tmp.sub(numbered(1, "wal"));
  write_file(path, bytes);
  auto f = SourceFile::open(path);
  REQUIRE(f.ok());
  Decoded d;
  d.status = read_wal_segment(f.value(), &d.entries);
  return d;
}

// One physical record, framed by hand.
std::string physical(uint8_t type, const std::string& payload) {
  std::string out;
  char t = static_cast<char>(type);
  be(&out, crc(std::string_view(&t, 1), payload), 4);
  be(&out, payload.size(), 2);
  out.push_back(t);
  out += payload;
  return out;
}

Op set(const std::string& key, uint64_t seq, size_t value_len) {
  return Op{key, seq, kSet, 1700000000000000000ull + seq, std::string(value_len, 'v')};
}

void expect_error(const Decoded& d, skv::Code code, const std::string& text) {
  INFO(d.status.to_string());
  CHECK(d.status.code() == code);
  CHECK(d.status.message().find("offset") != std::string::npos);
  CHECK(d.status.message().find(text) != std::string::npos);
}

}  // namespace

TEST_CASE("surrealkv wal: a record ending 3 bytes before a block boundary and its zero padding") {
  skv::testing::TempDir tmp("skvw");
  // A batch of 32758 bytes fills a block but for 3 bytes (7-byte header + 32758 = 32765).
  size_t len = 32700;
  while (encode_batch({set("a", 10, len)}).size() < 32758) ++len;
  REQUIRE(encode_batch({set("a", 10, len)}).size() == 32758);
  WalBuilder w;
  w.add_record(encode_batch({set("a", 10, len)}));
  w.add_record(encode_batch({set("b", 11, 5), Op{"c", 12, kDelete, 99, ""}}));
  REQUIRE(w.bytes().size() > 32768);
  REQUIRE(w.bytes().substr(32765, 3) == std::string(3, '\0'));
  Decoded d = decode(tmp, w.bytes());
  REQUIRE(d.status.ok());
  REQUIRE(d.entries.size() == 3);
  CHECK(d.entries[0].user_key == "a");
  CHECK(d.entries[0].value == inline_value(std::string(len, 'v')));
  CHECK(d.entries[1].user_key == "b");
  CHECK(d.entries[1].seq == 11);
  CHECK(d.entries[2].kind == kDelete);
  CHECK(d.entries[2].seq == 12);
  CHECK(d.entries[2].timestamp == 99);
  CHECK(d.entries[2].value.empty());

  std::string bad = w.bytes();
  bad[32766] = 1;
  expect_error(decode(tmp, bad), skv::Code::Corruption, "padding not zero");
}

TEST_CASE("surrealkv wal: zeros after the last record read as empty and nothing else does") {
  skv::testing::TempDir tmp("skvw");
  WalBuilder w;
  w.add_record(encode_batch({set("a", 1, 3)}));
  Decoded d = decode(tmp, w.bytes() + std::string(100, '\0'));
  REQUIRE(d.status.ok());
  CHECK(d.entries.size() == 1);
  expect_error(decode(tmp, w.bytes() + std::string(100, '\0') + "x"), skv::Code::Corruption,
               "empty record followed by data");
}

TEST_CASE("surrealkv wal: fragments out of order and unknown types are named") {
  skv::testing::TempDir tmp("skvw");
  std::string batch = encode_batch({set("a", 1, 3)});
  expect_error(decode(tmp, physical(2, batch)), skv::Code::Corruption, "cut short");
  expect_error(decode(tmp, physical(3, batch)), skv::Code::Corruption, "without a first fragment");
  expect_error(decode(tmp, physical(4, batch)), skv::Code::Corruption, "without a first fragment");
  expect_error(decode(tmp, physical(2, batch) + physical(1, batch)), skv::Code::Corruption,
               "starts inside the record");
  expect_error(decode(tmp, physical(5, batch)), skv::Code::Corruption, "unknown WAL record type 5");
  expect_error(decode(tmp, physical(1, batch) + physical(9, std::string(1, '\0'))),
               skv::Code::Corruption, "not at the start");
  std::string flipped = physical(1, batch);
  flipped[3] ^= 1;  // the CRC
  expect_error(decode(tmp, flipped), skv::Code::Corruption, "CRC-32");
  // A first and a last fragment join into one batch.
  Decoded d = decode(tmp, physical(2, batch.substr(0, 4)) + physical(3, batch.substr(4, 3)) +
                              physical(4, batch.substr(7)));
  REQUIRE(d.status.ok());
  CHECK(d.entries.size() == 1);
}

TEST_CASE("surrealkv wal: LZ4 segments decode and a wrong size prefix is named") {
  skv::testing::TempDir tmp("skvw");
  WalBuilder w(1);
  w.add_record(encode_batch({set("k", 5, 5000), set("l", 6, 1)}));
  Decoded d = decode(tmp, w.bytes());
  REQUIRE(d.status.ok());
  REQUIRE(d.entries.size() == 2);
  CHECK(d.entries[0].value == inline_value(std::string(5000, 'v')));
  CHECK(w.bytes().size() < 1000);  // it was compressed

  // The same compressed body under a size prefix one too large.
  std::string batch = encode_batch({set("k", 5, 5000)});
  WalBuilder probe(1);
  probe.add_record(batch);
  std::string body = probe.bytes().substr(8 + 7);  // after the compression record and header
  uint32_t size = static_cast<uint32_t>(batch.size() + 1);
  std::string payload;
  le32(&payload, size);
  payload += body.substr(4);
  expect_error(decode(tmp, physical(9, std::string(1, '\1')) + physical(1, payload)),
               skv::Code::Corruption, "LZ4");
}

TEST_CASE("surrealkv wal: batches are decoded exactly") {
  skv::testing::TempDir tmp("skvw");
  std::string batch = encode_batch({set("a", 1, 3)});
  expect_error(decode(tmp, physical(1, batch + "x")), skv::Code::Corruption, "trailing bytes");
  std::string flag = batch;
  flag.back() = 1;
  expect_error(decode(tmp, physical(1, flag)), skv::Code::NotSupported, "value pointer");
  std::string count = batch;
  count[2] = 100;  // one-byte varint start 1, count 100 > what the bytes hold
  expect_error(decode(tmp, physical(1, count)), skv::Code::Corruption, "entry count 100");
  Op tomb{"a", 1, kSoftDelete, 5, ""};
  std::string with_value = encode_batch({tomb});
  // value_len 0 → 1 and one more byte: a tombstone with a value.
  size_t vlen_at = 1 + 1 + 1 + 1 + 1 + 1;  // version, seq, count, kind, key_len, key
  with_value[vlen_at] = 1;
  with_value.insert(vlen_at + 1, "z");
  expect_error(decode(tmp, physical(1, with_value)), skv::Code::Corruption,
               "tombstone with a value");
}
