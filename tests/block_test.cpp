// skv-test-modules: util sstable
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "format/internal_key.h"
#include "sstable/block.h"
#include "sstable/block_builder.h"
#include "sstable/block_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

using namespace skv;

namespace {

using Model = std::map<std::string, std::string, InternalKeyLess>;

constexpr const char* kFile = "000007.sst";

// An ObjectReader over a string, for read_block.
class StringReader final : public ObjectReader {
 public:
  StringReader(std::string name, std::string data)
      : name_(std::move(name)), data_(std::move(data)) {}
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return data_.size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    if (offset >= data_.size()) {
      *result = {};
      return Status::OK();
    }
    n = std::min<size_t>(n, data_.size() - offset);
    std::memcpy(scratch, data_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return Status::OK();
  }

 private:
  std::string name_;
  std::string data_;
};

std::string random_user_key(std::mt19937_64& rng) {
  static const char* kPrefixes[] = {"", "a", "app", "apple/", "b/x/", "zz"};
  std::string k = kPrefixes[rng() % 6];
  const size_t len = rng() % 10;
  for (size_t i = 0; i < len; ++i) k.push_back(static_cast<char>('a' + rng() % 4));
  return k;
}

Model random_model(std::mt19937_64& rng, size_t n) {
  Model m;
  while (m.size() < n) {
    const std::string uk = random_user_key(rng);
    const SequenceNumber seq = 1 + rng() % 1000;
    const ValueKind kind = rng() % 5 == 0 ? ValueKind::Delete : ValueKind::Value;
    std::string value = kind == ValueKind::Delete ? "" : "v" + std::to_string(rng() % 100000);
    m.emplace(make_internal_key(uk, seq, kind, rng()), std::move(value));
  }
  return m;
}

std::shared_ptr<const Block> build_block(const Model& m, int restart_interval,
                                         size_t restart_bytes = 0) {
  BlockBuilder b(restart_interval, restart_bytes);
  for (const auto& [k, v] : m) b.add(k, v);
  auto r = Block::create(BlockContents::copy_of(b.finish()), kFile, 0);
  REQUIRE(r.ok());
  return *r;
}

std::string random_target(std::mt19937_64& rng, const Model& m) {
  if (!m.empty() && rng() % 2 == 0) {
    auto it = m.begin();
    std::advance(it, static_cast<long>(rng() % m.size()));
    return it->first;
  }
  return make_internal_key(random_user_key(rng), rng() % 1100, ValueKind::Value, 0);
}

void expect_at(const InternalIterator& it, const Model& m, Model::const_iterator pos) {
  if (pos == m.end()) {
    CHECK_FALSE(it.valid());
    return;
  }
  REQUIRE(it.valid());
  CHECK(it.key() == pos->first);
  CHECK(it.value() == pos->second);
}

}  // namespace

TEST_CASE("block round-trips random keys and matches a map model", "[block]") {
  const int interval = GENERATE(1, 2, 16);
  // A byte limit of 40 makes restarts every one to four entries, at irregular distances.
  const size_t restart_bytes = GENERATE(size_t{0}, size_t{40});
  const uint64_t seed = 1000 + static_cast<uint64_t>(interval);
  INFO("seed " << seed << " restart interval " << interval << " restart bytes " << restart_bytes);
  std::mt19937_64 rng(seed);
  const Model m = random_model(rng, 500);
  auto block = build_block(m, interval, restart_bytes);
  BlockIterator it(block, kFile, 0);

  // Forward and backward scans.
  auto pos = m.begin();
  for (it.seek_first(); it.valid(); it.next(), ++pos) expect_at(it, m, pos);
  CHECK(pos == m.end());
  auto rpos = m.rbegin();
  for (it.seek_last(); it.valid(); it.prev(), ++rpos) {
    REQUIRE(rpos != m.rend());
    CHECK(it.key() == rpos->first);
  }
  CHECK(rpos == m.rend());
  CHECK(it.status().ok());

  // Random seeks followed by random walks with direction switches.
  for (int round = 0; round < 300; ++round) {
    const std::string target = random_target(rng, m);
    Model::const_iterator want;
    if (rng() % 4 == 0) {
      it.seek_for_prev(target);
      want = m.upper_bound(target);
      want = want == m.begin() ? m.end() : std::prev(want);
    } else {
      it.seek(target);
      want = m.lower_bound(target);
    }
    expect_at(it, m, want);
    for (int step = 0; step < 20 && want != m.end(); ++step) {
      if (rng() % 2 == 0) {
        it.next();
        ++want;
      } else {
        it.prev();
        want = want == m.begin() ? m.end() : std::prev(want);
      }
      expect_at(it, m, want);
    }
  }
  CHECK(it.status().ok());
}

TEST_CASE("seeks land right when restart keys share long prefixes, tie, or end early", "[block]") {
  // Restart words hold the 8 bytes after the prefix every restart's user key shares: these keys
  // share "tenant/0042/" and differ in the next bytes, end inside or before those 8 bytes (some
  // are prefixes of others, some end in zero bytes that padding must not confuse), or share all
  // 8 and differ later, and some have many versions (equal words across restarts).
  const int interval = GENERATE(1, 2, 3, 16);
  INFO("restart interval " << interval);
  std::mt19937_64 rng(77 + static_cast<uint64_t>(interval));
  const std::string common = "tenant/0042/";
  const std::vector<std::string> tails = {"",
                                          std::string("\0", 1),
                                          std::string("\0\0", 2),
                                          "a",
                                          std::string("a\0", 2),
                                          "a\x01",
                                          "ab",
                                          "abcdefgh",
                                          "abcdefgh0",
                                          "abcdefgh1",
                                          "abcdefghzz",
                                          "abcdefgi",
                                          "b",
                                          "\x7f",
                                          "\x80",
                                          "\xff",
                                          "\xff\xff\xff\xff\xff\xff\xff\xff\xff"};
  Model m;
  for (const std::string& tail : tails) {
    const int versions = tail == "ab" || tail == "abcdefgh0" ? 12 : 1;
    for (int v = 1; v <= versions; ++v) {
      m.emplace(make_internal_key(common + tail, static_cast<SequenceNumber>(10 * v),
                                  ValueKind::Value, 0),
                "v" + std::to_string(m.size()));
    }
  }
  auto block = build_block(m, interval);
  BlockIterator it(block, kFile, 0);
  // Targets: every key, every user key above, below and between its versions, and user keys
  // outside the shared prefix, cut inside it, or ending with it.
  std::vector<std::string> users = {"",
                                    "t",
                                    "tenant/0041/zzz",
                                    "tenant/0042",
                                    "tenant/0043/",
                                    "tenant/0042/abcdefg",
                                    "tenant/0042/abcdefgh\0",
                                    "tenant/0042/abcdefgg\xff",
                                    "tenant/0042/\0\0\0",
                                    "u"};
  for (const std::string& tail : tails) {
    users.push_back(common + tail);
    users.push_back(common + tail + std::string("\0", 1));
    users.push_back(common + tail + "m");
  }
  for (int i = 0; i < 200; ++i) {
    std::string u = common;
    const size_t len = rng() % 12;
    for (size_t j = 0; j < len; ++j)
      u.push_back(
          "\0\x01"
          "abgh\x7f\x80\xff"[rng() % 9]);
    users.push_back(u);
  }
  std::vector<std::string> targets;
  for (const auto& [k, v] : m) targets.push_back(k);
  for (const std::string& u : users) {
    for (SequenceNumber seq :
         {SequenceNumber{0}, SequenceNumber{5}, SequenceNumber{55}, SequenceNumber{1000}}) {
      targets.push_back(make_seek_key(u, seq));
    }
  }
  for (const std::string& target : targets) {
    INFO("target user key '" << extract_user_key(target) << "'");
    it.seek(target);
    expect_at(it, m, m.lower_bound(target));
  }
  CHECK(it.status().ok());
}

TEST_CASE("an empty block has no entries", "[block]") {
  BlockBuilder b(16);
  CHECK(b.empty());
  auto r = Block::create(BlockContents::copy_of(b.finish()), kFile, 0);
  REQUIRE(r.ok());
  BlockIterator it(*r, kFile, 0);
  it.seek_first();
  CHECK_FALSE(it.valid());
  it.seek_last();
  CHECK_FALSE(it.valid());
  it.seek(make_internal_key("x", 1, ValueKind::Value, 0));
  CHECK_FALSE(it.valid());
  CHECK(it.status().ok());
}

TEST_CASE("block builder shares prefixes and restarts every interval", "[block]") {
  BlockBuilder b(2);
  Model m;
  for (int i = 0; i < 5; ++i) {
    m.emplace(make_internal_key("common/prefix/" + std::to_string(i), 5, ValueKind::Value, 0), "v");
  }
  for (const auto& [k, v] : m) b.add(k, v);
  std::string_view data = b.finish();
  CHECK(decode_fixed32(data.data() + data.size() - 4) == 3);  // entries 0, 2 and 4
  // The second entry shares the whole "common/prefix/" part.
  auto block = *Block::create(BlockContents::copy_of(data), kFile, 0);
  const uint32_t second = block->restart_point(1);
  CHECK(second > 0);
  std::string_view p = data;
  uint32_t shared = 0, non_shared = 0, vlen = 0;
  REQUIRE(get_varint32(&p, &shared));
  CHECK(shared == 0);
  REQUIRE(get_varint32(&p, &non_shared));
  REQUIRE(get_varint32(&p, &vlen));
  p.remove_prefix(non_shared + vlen);
  REQUIRE(get_varint32(&p, &shared));
  CHECK(shared == std::string("common/prefix/").size());
}

TEST_CASE("a byte limit restarts early between large entries and leaves small ones alone",
          "[block]") {
  // 40 entries of about 315 bytes (a 12-byte internal key, a 300-byte value): with a 1,024-byte
  // limit the fourth entry after a restart is the last to share a prefix, so every fourth entry
  // starts a restart.
  Model large, small;
  for (int i = 0; i < 40; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "k%03d", i);
    large.emplace(make_internal_key(name, 5, ValueKind::Value, 0), std::string(300, 'x'));
    small.emplace(make_internal_key(name, 5, ValueKind::Value, 0), "v");
  }
  struct Case {
    const Model* m;
    int interval;
    size_t bytes;
    uint32_t restarts;
  };
  const Case cases[] = {
      {&large, 16, 1024, 10},  // the byte limit: every fourth entry
      {&large, 16, 0, 3},      // no byte limit: entries 0, 16 and 32
      {&large, 2, 1024, 20},   // the count still applies first
      {&small, 16, 1024, 3},   // 16 small entries hold far less than 1,024 bytes
  };
  for (const Case& c : cases) {
    INFO("interval " << c.interval << " bytes " << c.bytes << " large " << (c.m == &large));
    auto block = build_block(*c.m, c.interval, c.bytes);
    CHECK(block->num_restarts() == c.restarts);
    BlockIterator it(block, kFile, 0);
    for (const auto& [k, v] : *c.m) {
      it.seek(k);
      REQUIRE(it.valid());
      CHECK(it.key() == k);
      CHECK(it.value() == v);
    }
    CHECK(it.status().ok());
  }
}

TEST_CASE("malformed restart arrays are rejected", "[block][corruption]") {
  std::mt19937_64 rng(11);
  const Model m = random_model(rng, 40);
  BlockBuilder b(4);
  for (const auto& [k, v] : m) b.add(k, v);
  const std::string good(b.finish());
  const uint32_t n = decode_fixed32(good.data() + good.size() - 4);
  const size_t restarts = good.size() - 4 - n * 4;

  auto expect_bad = [](std::string data) {
    auto r = Block::create(BlockContents::copy_of(data), kFile, 4096);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().is_corruption());
    CHECK(r.status().message().find(kFile) != std::string::npos);
    CHECK(r.status().message().find("offset 4096") != std::string::npos);
  };
  std::string s = good;
  encode_fixed32(s.data() + s.size() - 4, 0);  // no restarts
  expect_bad(s);
  s = good;
  encode_fixed32(s.data() + s.size() - 4, 0x7fffffff);  // more restarts than bytes
  expect_bad(s);
  s = good;
  encode_fixed32(s.data() + restarts, 3);  // first restart not at 0
  expect_bad(s);
  s = good;
  encode_fixed32(s.data() + restarts + 4, static_cast<uint32_t>(restarts));  // into the array
  expect_bad(s);
  expect_bad("ab");  // shorter than the count
}

TEST_CASE("malformed entries are corruption, at creation or when the iterator reaches them",
          "[block][corruption]") {
  auto check_corrupt = [](const std::string& data, bool seek) {
    auto r = Block::create(BlockContents::copy_of(data), kFile, 512);
    if (!r.ok()) {  // found by the layout check when the block is created
      REQUIRE(r.status().is_corruption());
      CHECK(r.status().message().find(kFile) != std::string::npos);
      CHECK(r.status().message().find("offset 512") != std::string::npos);
      return;
    }
    BlockIterator it(*r, kFile, 512);
    if (seek) {
      it.seek(make_internal_key("zzz", 1, ValueKind::Value, 0));
    } else {
      for (it.seek_first(); it.valid(); it.next()) {
      }
    }
    CHECK_FALSE(it.valid());
    REQUIRE(it.status().is_corruption());
    CHECK(it.status().message().find(kFile) != std::string::npos);
    CHECK(it.status().message().find("offset 512") != std::string::npos);
    // The error is sticky.
    it.seek_first();
    CHECK_FALSE(it.valid());
    CHECK(it.status().is_corruption());
  };

  const std::string k1 = make_internal_key("apple", 3, ValueKind::Value, 0);
  const std::string k2 = make_internal_key("banana", 3, ValueKind::Value, 0);
  // value_len runs past the entry area.
  std::string s;
  put_varint32(&s, 0);
  put_varint32(&s, static_cast<uint32_t>(k1.size()));
  put_varint32(&s, 1000);
  s += k1;
  put_fixed32(&s, 0);
  put_fixed32(&s, 1);
  check_corrupt(s, false);
  check_corrupt(s, true);

  // A restart entry that claims a shared prefix.
  s.clear();
  put_varint32(&s, 3);
  put_varint32(&s, static_cast<uint32_t>(k1.size()));
  put_varint32(&s, 0);
  s += k1;
  put_fixed32(&s, 0);
  put_fixed32(&s, 1);
  check_corrupt(s, false);
  check_corrupt(s, true);

  // A key shorter than an internal key suffix.
  s.clear();
  put_varint32(&s, 0);
  put_varint32(&s, 3);
  put_varint32(&s, 0);
  s += "abc";
  put_fixed32(&s, 0);
  put_fixed32(&s, 1);
  check_corrupt(s, false);

  // A second entry sharing more bytes than the previous key has.
  s.clear();
  put_varint32(&s, 0);
  put_varint32(&s, static_cast<uint32_t>(k1.size()));
  put_varint32(&s, 0);
  s += k1;
  put_varint32(&s, 200);
  put_varint32(&s, static_cast<uint32_t>(k2.size()));
  put_varint32(&s, 0);
  s += k2;
  put_fixed32(&s, 0);
  put_fixed32(&s, 1);
  check_corrupt(s, false);
}

TEST_CASE("random garbage in a block never crashes the iterator", "[block][corruption]") {
  const uint64_t seed = 99;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const Model m = random_model(rng, 60);
  BlockBuilder b(4);
  for (const auto& [k, v] : m) b.add(k, v);
  const std::string good(b.finish());
  for (int round = 0; round < 2000; ++round) {
    std::string s = good;
    const size_t flips = 1 + rng() % 4;
    for (size_t i = 0; i < flips; ++i) s[rng() % s.size()] ^= static_cast<char>(1 << (rng() % 8));
    auto r = Block::create(BlockContents::copy_of(s), kFile, 0);
    if (!r.ok()) {
      CHECK(r.status().is_corruption());
      continue;
    }
    BlockIterator it(*r, kFile, 0);
    size_t steps = 0;
    for (it.seek_first(); it.valid() && steps < 1000; it.next()) ++steps;
    for (it.seek_last(); it.valid() && steps < 2000; it.prev()) ++steps;
    it.seek(random_target(rng, m));
    CHECK((it.status().ok() || it.status().is_corruption()));
  }
}

TEST_CASE("stored blocks carry a checksum and compress only when it pays", "[block][format]") {
  std::string compressible;
  for (int i = 0; i < 400; ++i) compressible += "the same words again and again ";
  std::mt19937_64 rng(5);
  std::string random_bytes;
  for (int i = 0; i < 4000; ++i) random_bytes.push_back(static_cast<char>(rng()));

  for (Compression c : {Compression::None, Compression::Zstd}) {
    BlockEncoder enc(c, 3);
    for (const std::string* raw : {&compressible, &random_bytes}) {
      std::string stored;
      enc.encode(*raw, true, &stored);
      const uint8_t type = static_cast<uint8_t>(stored[stored.size() - kBlockTrailerSize]);
      const bool expect_zstd = c == Compression::Zstd && raw == &compressible;
      CHECK(type == (expect_zstd ? kBlockTypeZstd : kBlockTypeNone));
      if (expect_zstd) CHECK(stored.size() < raw->size() / 4);

      const std::string file = std::string(100, 'h') + stored;
      StringReader reader(kFile, file);
      const BlockHandle h{100, stored.size() - kBlockTrailerSize};
      auto r = read_block(reader, h);
      REQUIRE(r.ok());
      CHECK(r->view() == *raw);

      // Any single bit flip is caught.
      for (size_t i = 0; i < stored.size(); i += 7) {
        std::string bad = file;
        bad[100 + i] ^= 0x10;
        StringReader br(kFile, bad);
        auto rb = read_block(br, h);
        REQUIRE_FALSE(rb.ok());
        CHECK(rb.status().is_corruption());
        CHECK(rb.status().message().find("000007.sst") != std::string::npos);
        CHECK(rb.status().message().find("offset 100") != std::string::npos);
      }
      // Handles leaving the file or claiming huge sizes are rejected before reading.
      BlockHandle past{100, stored.size()};
      CHECK(read_block(reader, past).status().is_corruption());
      BlockHandle huge{100, uint64_t{1} << 62};
      CHECK(read_block(reader, huge).status().is_corruption());
      BlockHandle wrap{~uint64_t{0} - 2, 10};
      CHECK(read_block(reader, wrap).status().is_corruption());
    }
  }
}

TEST_CASE("a compressed block declaring an oversized length is rejected", "[block][format]") {
  BlockEncoder enc(Compression::Zstd, 1);
  std::string raw(10000, 'q');
  std::string stored;
  enc.encode(raw, true, &stored);
  REQUIRE(static_cast<uint8_t>(stored[stored.size() - kBlockTrailerSize]) == kBlockTypeZstd);
  std::string payload = stored.substr(0, stored.size() - kBlockTrailerSize);
  std::string_view in = payload;
  uint64_t len = 0;
  REQUIRE(get_varint64(&in, &len));
  CHECK(len == raw.size());

  auto reframe = [](std::string body) {
    body.push_back(static_cast<char>(kBlockTypeZstd));
    put_fixed32(&body, crc32c::mask(crc32c::value(body.data(), body.size())));
    return body;
  };
  for (uint64_t claimed : {uint64_t{1} << 40, uint64_t{9999}, uint64_t{10001}}) {
    std::string body;
    put_varint64(&body, claimed);
    body.append(in.data(), in.size());
    const std::string file = reframe(body);
    StringReader reader(kFile, file);
    auto r = read_block(reader, BlockHandle{0, file.size() - kBlockTrailerSize});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().is_corruption());
  }
}

TEST_CASE("block handles and footers round-trip", "[block][format]") {
  std::string s;
  encode_block_handle({12345678901ull, 77}, &s);
  std::string_view in = s;
  BlockHandle h;
  REQUIRE(decode_block_handle(&in, &h));
  CHECK(h.offset == 12345678901ull);
  CHECK(h.size == 77);
  CHECK(in.empty());
  std::string_view cut = std::string_view(s).substr(0, s.size() - 1);
  CHECK_FALSE(decode_block_handle(&cut, &h));

  TableFooter f;
  f.index = {1000, 20};
  f.filter = {900, 95};
  f.properties = {1025, 40};
  std::string enc;
  encode_table_footer(f, &enc);
  REQUIRE(enc.size() == kTableFooterSize);
  TableFooter g;
  REQUIRE(decode_table_footer(enc, kFile, 5000, &g).ok());
  CHECK(g.index.offset == 1000);
  CHECK(g.filter.size == 95);
  CHECK(g.properties.offset == 1025);
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] ^= 1;
    Status st = decode_table_footer(bad, kFile, 5000, &g);
    CHECK(st.is_corruption());
    CHECK(st.message().find("offset 5000") != std::string::npos);
  }
}

TEST_CASE("a restart point inside an entry is corruption when the block is created",
          "[block][corruption]") {
  // Found by block_fuzz: seeks decode at restart points, so one pointing into the middle of an
  // entry would yield an entry the forward walk never sees.
  BlockBuilder b(2);
  const std::string k1 = make_internal_key("alpha", 5, ValueKind::Value, 0);
  const std::string k2 = make_internal_key("alphabet", 4, ValueKind::Value, 0);
  const std::string k3 = make_internal_key("beta", 3, ValueKind::Value, 0);
  b.add(k1, "one");
  b.add(k2, "two");
  b.add(k3, "three");
  std::string good(b.finish());
  const size_t restarts = good.size() - 4 - 2 * 4;
  REQUIRE(Block::create(BlockContents::copy_of(good), kFile, 0).ok());
  for (uint32_t r = 1; r < restarts; ++r) {
    std::string s = good;
    encode_fixed32(s.data() + restarts + 4, r);
    auto created = Block::create(BlockContents::copy_of(s), kFile, 0);
    const uint32_t real = decode_fixed32(good.data() + restarts + 4);
    INFO("second restart at " << r << " (really " << real << ")");
    if (r == real) {
      CHECK(created.ok());
    } else {
      CHECK(created.status().is_corruption());
    }
  }
}
