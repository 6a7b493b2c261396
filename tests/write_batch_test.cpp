// skv-test-modules: util wal
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "skv/options.h"
#include "util/coding.h"
#include "wal/write_batch.h"

using namespace skv;

namespace {

struct Op {
  ValueKind kind;
  std::string key;
  std::string value;
  uint64_t timestamp;
  bool operator==(const Op&) const = default;
};

std::string random_bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

// Decodes into a list of ops; the status is returned through *status.
std::vector<Op> decode_all(std::string_view record, SequenceNumber* seq, Status* status) {
  std::vector<Op> out;
  *status = WriteBatch::decode(record, seq, [&](const WriteBatch::Entry& e) {
    out.push_back({e.kind, std::string(e.key), std::string(e.value), e.timestamp});
  });
  return out;
}

}  // namespace

TEST_CASE("write batches round-trip", "[write_batch]") {
  const uint64_t seed = 4242;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 50; ++round) {
    WriteBatch b;
    std::vector<Op> model;
    const SequenceNumber seq = rng() & kMaxSequenceNumber;
    const uint64_t commit_ts = rng() & kMaxTimestamp;
    b.set_sequence(seq);
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      Op op;
      op.key = random_bytes(rng, 1 + rng() % (round % 5 == 0 ? 300 : 20));
      // Half the entries carry a timestamp of their own; the others get the commit's.
      const uint64_t own = rng() % 2 == 0 ? 0 : 1 + rng() % kMaxTimestamp;
      op.timestamp = own != 0 ? own : commit_ts;
      if (rng() % 3 == 0) {
        op.kind = ValueKind::Delete;
        b.del(op.key, own);
      } else {
        op.kind = ValueKind::Value;
        op.value = random_bytes(rng, rng() % (round % 7 == 0 ? 1000 : 30));
        b.put(op.key, op.value, own);
      }
      model.push_back(op);
    }
    b.set_commit_timestamp(commit_ts);  // late, as the commit pipeline does
    CHECK(b.count() == static_cast<uint32_t>(n));
    CHECK(b.sequence() == seq);
    CHECK(b.commit_timestamp() == commit_ts);
    CHECK(WriteBatch::commit_timestamp_of(b.encoded()) == commit_ts);
    std::string enc = b.encoded();
    CHECK(b.approximate_size() == enc.size());
    CHECK(b.encoded() == enc);  // encoding twice changes nothing
    SequenceNumber got_seq = 0;
    Status s;
    std::vector<Op> got = decode_all(enc, &got_seq, &s);
    REQUIRE(s.ok());
    CHECK(got_seq == seq);
    CHECK(got == model);
  }
}

TEST_CASE("clear empties a batch and the sequence can be set late", "[write_batch]") {
  WriteBatch b;
  b.put("a", "1", 10);
  b.del("b", 11);
  b.clear();
  CHECK(b.count() == 0);
  CHECK(b.sequence() == 0);
  b.put("c", "", 12);  // empty values are values
  b.set_sequence(77);
  SequenceNumber seq = 0;
  Status s;
  std::vector<Op> got = decode_all(b.encoded(), &seq, &s);
  REQUIRE(s.ok());
  CHECK(seq == 77);
  REQUIRE(got.size() == 1);
  CHECK(got[0] == Op{ValueKind::Value, "c", "", 12});

  WriteBatch empty;
  got = decode_all(empty.encoded(), &seq, &s);
  REQUIRE(s.ok());
  CHECK(got.empty());
}

TEST_CASE("a batch cut at any byte is corruption and delivers nothing", "[write_batch]") {
  WriteBatch b;
  b.set_sequence(5);
  b.put("key-one", "value one", 1);
  b.del("key-two", 2);
  b.put(std::string(200, 'k'), std::string(300, 'v'), 3);  // two-byte varints
  const std::string enc = b.encoded();
  for (size_t cut = 0; cut < enc.size(); ++cut) {
    INFO("cut at " << cut);
    SequenceNumber seq = 0;
    Status s;
    std::vector<Op> got = decode_all(std::string_view(enc).substr(0, cut), &seq, &s);
    CHECK(s.is_corruption());
    CHECK(got.empty());
  }
  // Extra bytes after the last entry.
  SequenceNumber seq = 0;
  Status s;
  CHECK(decode_all(enc + "x", &seq, &s).empty());
  CHECK(s.is_corruption());
}

TEST_CASE("malformed batches are corruption, never a crash", "[write_batch]") {
  auto make = [](uint64_t seq, uint32_t count, std::string_view body, uint64_t ts = 5) {
    std::string r;
    put_fixed64(&r, seq);
    put_fixed64(&r, ts);
    put_fixed32(&r, count);
    r.append(body);
    return r;
  };
  constexpr char kOwnTimestamp = static_cast<char>(0x80);
  std::string good_entry;
  good_entry.push_back(static_cast<char>(ValueKind::Delete) | kOwnTimestamp);
  put_varint32(&good_entry, 1);
  good_entry += "k";
  put_fixed64(&good_entry, 9);
  std::string plain_entry;  // no timestamp of its own
  plain_entry.push_back(static_cast<char>(ValueKind::Delete));
  put_varint32(&plain_entry, 1);
  plain_entry += "k";

  SequenceNumber seq = 0;
  Status s;
  std::vector<Op> got = decode_all(make(1, 1, good_entry), &seq, &s);
  REQUIRE(s.ok());
  CHECK(got == std::vector<Op>{{ValueKind::Delete, "k", "", 9}});
  got = decode_all(make(1, 1, plain_entry), &seq, &s);
  REQUIRE(s.ok());
  CHECK(got == std::vector<Op>{{ValueKind::Delete, "k", "", 5}});

  std::string own_zero = plain_entry;  // an own timestamp of 0 is never written
  own_zero[0] |= kOwnTimestamp;
  put_fixed64(&own_zero, 0);
  std::string own_too_big = plain_entry;
  own_too_big[0] |= kOwnTimestamp;
  put_fixed64(&own_too_big, kMaxTimestamp + 1);
  // A value-log pointer is a valid kind in tables, never in a batch.
  std::string pointer_kind = plain_entry;
  pointer_kind[0] = static_cast<char>(ValueKind::ValuePointer);
  put_varint32(&pointer_kind, 3);
  pointer_kind += "ptr";

  std::string bad_kind = good_entry;
  bad_kind[0] = 7;
  std::string empty_key;
  empty_key.push_back(static_cast<char>(ValueKind::Delete));
  put_varint32(&empty_key, 0);
  std::string huge_key;
  huge_key.push_back(static_cast<char>(ValueKind::Value));
  put_varint32(&huge_key, 0xfffffff0u);
  huge_key += "k";
  std::string huge_value = good_entry;
  huge_value[0] = static_cast<char>(static_cast<char>(ValueKind::Value) | kOwnTimestamp);
  put_varint32(&huge_value, 1000);
  huge_value += "short";
  std::string overlong_varint = good_entry;
  overlong_varint.replace(1, 1, std::string(6, '\x80'));

  const std::string cases[] = {
      make(1, 1, bad_kind),
      make(1, 1, empty_key),
      make(1, 1, huge_key),
      make(1, 1, huge_value),
      make(1, 1, overlong_varint),
      make(1, 2, good_entry),            // count larger than the entries
      make(1, 0, good_entry),            // count smaller: trailing bytes
      make(1, 0xffffffffu, good_entry),  // count far beyond the input
      make(kMaxSequenceNumber + 1, 1, good_entry),
      make(1, 1, good_entry, kMaxTimestamp + 1),  // commit timestamp out of range
      make(1, 1, own_zero),
      make(1, 1, own_too_big),
      make(1, 1, pointer_kind),
      std::string(19, '\0'),
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    INFO("case " << i);
    bool called = false;
    Status st =
        WriteBatch::decode(cases[i], &seq, [&](const WriteBatch::Entry&) { called = true; });
    CHECK(st.is_corruption());
    CHECK_FALSE(called);
    CHECK(st.message().find("write batch") != std::string::npos);
  }

  // Random damage: any outcome but a crash or an out-of-range view.
  const uint64_t seed = 777;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  WriteBatch b;
  b.set_sequence(3);
  for (int i = 0; i < 20; ++i) b.put("key" + std::to_string(i), std::string(i, 'v'), i);
  const std::string enc = b.encoded();
  for (int round = 0; round < 5000; ++round) {
    std::string damaged = enc;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) damaged[rng() % damaged.size()] = static_cast<char>(rng());
    const char* lo = damaged.data();
    const char* hi = damaged.data() + damaged.size();
    Status st = WriteBatch::decode(damaged, &seq, [&](const WriteBatch::Entry& e) {
      CHECK((e.key.data() >= lo && e.key.data() + e.key.size() <= hi));
      CHECK(!e.key.empty());
      if (!e.value.empty()) CHECK((e.value.data() >= lo && e.value.data() + e.value.size() <= hi));
    });
    CHECK((st.ok() || st.is_corruption()));
  }
}

TEST_CASE("the batch of the docs/wal.md example, byte for byte", "[write_batch]") {
  WriteBatch b;
  b.del("d", 0);
  b.put("k", "v", 0);
  b.set_sequence(1);
  b.set_commit_timestamp(0x17a6101701650000ull);
  std::string hex;
  char buf[4];
  for (unsigned char c : b.encoded()) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    hex += buf;
  }
  CHECK(hex == "0100000000000000000065011710a6170200000000016401016b0176");
}
