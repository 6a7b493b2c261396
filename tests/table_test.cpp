// skv-test-modules: util sstable
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "format/file_header.h"
#include "format/internal_key.h"
#include "sstable/block.h"
#include "sstable/block_builder.h"
#include "sstable/block_format.h"
#include "sstable/table.h"
#include "sstable/table_builder.h"
#include "sstable/two_level_iterator.h"
#include "support/counting_blocks.h"
#include "support/string_object_reader.h"

using namespace skv;

namespace {

constexpr uint64_t kNumber = 42;
const std::string kName = "000042.sst";

// ObjectWriter over a string. `fail_after` makes appends fail once the object would exceed it.
class StringWriter final : public ObjectWriter {
 public:
  explicit StringWriter(std::string* out, size_t fail_after = SIZE_MAX)
      : out_(out), fail_after_(fail_after) {}
  Status append(std::string_view d) override {
    if (out_->size() + d.size() > fail_after_) return Status::io_error(kName + ": disk on fire");
    out_->append(d);
    return Status::OK();
  }
  uint64_t size() const override { return out_->size(); }
  Status finish() override {
    ++finished;
    return Status::OK();
  }
  void abort() override { ++aborted; }
  static inline int finished = 0;
  static inline int aborted = 0;

 private:
  std::string* out_;
  size_t fail_after_;
};

// The table's file in memory (support/string_object_reader.h), under kName.
std::unique_ptr<testing::StringObjectReader> reader_of(std::string data, bool zero_copy = false) {
  return std::make_unique<testing::StringObjectReader>(kName, std::move(data), zero_copy);
}

using Model = std::map<std::string, std::string, InternalKeyLess>;

struct Version {
  SequenceNumber seq;
  ValueKind kind;
  std::string value;
  uint64_t ts;
};

// Several versions per user key, some tombstones, values that compress well or not at all.
Model make_model(std::mt19937_64& rng, size_t num_keys, bool compressible) {
  Model m;
  for (size_t i = 0; i < num_keys; ++i) {
    char uk[32];
    std::snprintf(uk, sizeof(uk), "user/%06zu", i * 3);
    const int versions = 1 + static_cast<int>(rng() % 4);
    SequenceNumber seq = 1 + rng() % 50;
    for (int v = 0; v < versions; ++v) {
      seq += 1 + rng() % 20;
      const ValueKind kind = rng() % 5 == 0 ? ValueKind::Delete : ValueKind::Value;
      std::string value;
      if (kind == ValueKind::Value) {
        const size_t len = rng() % 120;
        for (size_t j = 0; j < len; ++j) {
          value.push_back(compressible ? "abcab "[j % 6] : static_cast<char>(rng()));
        }
      }
      m.emplace(make_internal_key(uk, seq, kind, 1000000 + seq), value);
    }
  }
  return m;
}

std::string build(const Model& m, const TableOptions& opts, TableProperties* props = nullptr) {
  std::string file;
  TableBuilder b(opts, std::make_unique<StringWriter>(&file), kNumber);
  for (const auto& [k, v] : m) REQUIRE(b.add(k, v).ok());
  REQUIRE(b.num_entries() == m.size());
  REQUIRE(b.finish().ok());
  REQUIRE(b.file_size() == file.size());
  if (props != nullptr) *props = b.properties();
  return file;
}

std::shared_ptr<Table> open_table(std::string file, BlockCache* cache = nullptr,
                                  bool zero_copy = false) {
  auto r = Table::open(reader_of(std::move(file), zero_copy), kNumber, cache);
  REQUIRE(r.ok());
  return *r;
}

// The newest version of user_key with seq <= snapshot, from the model.
bool model_get(const Model& m, const std::string& uk, SequenceNumber snapshot, Version* out) {
  auto it = m.lower_bound(make_seek_key(uk, snapshot));
  if (it == m.end()) return false;
  ParsedInternalKey p;
  REQUIRE(parse_internal_key(it->first, &p));
  if (p.user_key != uk) return false;
  *out = Version{p.sequence, p.kind, it->second, p.timestamp};
  return true;
}

void expect_at(const InternalIterator& it, const Model& m, Model::const_iterator pos) {
  REQUIRE(it.status().ok());
  if (pos == m.end()) {
    REQUIRE_FALSE(it.valid());
    return;
  }
  REQUIRE(it.valid());
  REQUIRE(it.key() == pos->first);
  REQUIRE(it.value() == pos->second);
}

bool names_file(const Status& s) { return s.message().find(kName) != std::string::npos; }

}  // namespace

TEST_CASE("tables iterate both ways like the model", "[table]") {
  const bool zstd = GENERATE(false, true);
  const int interval = GENERATE(1, 16);
  const size_t restart_bytes = GENERATE(size_t{0}, size_t{64});
  const bool with_cache = GENERATE(false, true);
  const bool readahead = GENERATE(false, true);
  const uint64_t seed = 4000 + (zstd ? 1 : 0) + static_cast<uint64_t>(interval);
  INFO("seed " << seed << " zstd " << zstd << " interval " << interval << " restart bytes "
               << restart_bytes << " cache " << with_cache << " readahead " << readahead);
  std::mt19937_64 rng(seed);
  const Model m = make_model(rng, 300, zstd);
  TableOptions opts;
  opts.block_size = 512;
  opts.block_restart_interval = interval;
  opts.block_restart_bytes = restart_bytes;
  opts.compression = zstd ? Compression::Zstd : Compression::None;
  TableProperties props;
  const std::string file = build(m, opts, &props);
  CHECK(props.data_blocks > 10);

  BlockCache cache(1 << 20);
  auto table = open_table(file, with_cache ? &cache : nullptr, with_cache);
  CHECK(table->file_size() == file.size());
  CHECK(table->file_number() == kNumber);
  CHECK(table->file_name() == kName);
  TableReadOptions ro;
  ro.readahead = readahead;
  auto it = table->new_iterator(ro);

  auto pos = m.begin();
  for (it->seek_first(); it->valid(); it->next(), ++pos) expect_at(*it, m, pos);
  CHECK(pos == m.end());
  auto rpos = m.rbegin();
  for (it->seek_last(); it->valid(); it->prev(), ++rpos) {
    REQUIRE(rpos != m.rend());
    REQUIRE(it->key() == rpos->first);
    REQUIRE(it->value() == rpos->second);
  }
  CHECK(rpos == m.rend());
  CHECK(it->status().ok());
  if (with_cache) CHECK(cache.usage() > 0);

  for (int round = 0; round < 400; ++round) {
    std::string target;
    if (rng() % 2 == 0) {
      auto at = m.begin();
      std::advance(at, static_cast<long>(rng() % m.size()));
      target = at->first;
    } else {
      target = make_seek_key("user/" + std::to_string(rng() % 1000), rng() % 200);
    }
    Model::const_iterator want;
    switch (rng() % 4) {
      case 0:
        it->seek_first();
        want = m.begin();
        break;
      case 1:
        it->seek_last();
        want = std::prev(m.end());
        break;
      case 2:
        it->seek_for_prev(target);
        want = m.upper_bound(target);
        want = want == m.begin() ? m.end() : std::prev(want);
        break;
      default:
        it->seek(target);
        want = m.lower_bound(target);
        break;
    }
    expect_at(*it, m, want);
    for (int step = 0; step < 30 && want != m.end(); ++step) {
      if (rng() % 2 == 0) {
        it->next();
        ++want;
      } else {
        it->prev();
        want = want == m.begin() ? m.end() : std::prev(want);
      }
      expect_at(*it, m, want);
    }
  }
}

TEST_CASE("get returns the version visible at each snapshot", "[table]") {
  const bool zstd = GENERATE(false, true);
  const int bloom_bits = GENERATE(0, 10);
  const bool pooled = GENERATE(false, true);  // blocks read into a BlockBufferPool's chunks
  const uint64_t seed = 5000 + (zstd ? 1 : 0) + static_cast<uint64_t>(bloom_bits);
  INFO("seed " << seed << (pooled ? ", pooled buffers" : ""));
  std::mt19937_64 rng(seed);
  const Model m = make_model(rng, 250, zstd);
  TableOptions opts;
  opts.block_size = 300;
  opts.compression = zstd ? Compression::Zstd : Compression::None;
  opts.bloom_bits_per_key = bloom_bits;
  BlockCache cache(64 * 1024,
                   pooled ? BlockBufferPool::create(
                                std::make_shared<testing::CountingBlocks>(64 * 1024), 256 * 1024)
                          : nullptr);
  REQUIRE((cache.buffers() != nullptr) == pooled);
  auto table = open_table(build(m, opts), &cache);

  std::vector<SequenceNumber> snapshots = {
      0, 1, 30, 60, 90, kMaxSequenceNumber, ~SequenceNumber{0}};
  for (const auto& [ikey, value] : m) {
    const SequenceNumber s = extract_trailer(ikey) >> 8;
    snapshots.push_back(s);
    snapshots.push_back(s - 1);
  }
  size_t found = 0, tombstones = 0, filtered = 0;
  for (size_t i = 0; i < 260 * 3; ++i) {
    char uk[32];
    std::snprintf(uk, sizeof(uk), "user/%06zu", i);  // two of three are absent
    if (bloom_bits > 0 && i % 3 == 0 && i < 250 * 3) CHECK(table->may_contain(uk));
    if (i % 3 != 0 && !table->may_contain(uk)) ++filtered;
    for (size_t j = 0; j < 12; ++j) {
      const SequenceNumber snap = snapshots[rng() % snapshots.size()];
      Version want;
      const bool expected = model_get(m, uk, std::min(snap, kMaxSequenceNumber), &want);
      Table::GetResult got;
      REQUIRE(table->get(uk, snap, &got).ok());
      REQUIRE(got.found == expected);
      if (!expected) continue;
      ++found;
      CHECK(got.kind == want.kind);
      CHECK(got.sequence == want.seq);
      CHECK(got.timestamp == want.ts);
      CHECK(got.value == want.value);
      if (got.kind == ValueKind::Delete) ++tombstones;
    }
  }
  CHECK(found > 500);
  CHECK(tombstones > 10);
  // Without a filter nothing is ruled out; with one, nearly every absent key is.
  if (bloom_bits == 0) CHECK(filtered == 0);
  if (bloom_bits > 0) CHECK(filtered > 480);
  // The cache (64 KiB) is smaller than the table, so its buffers were freed and taken again.
  if (pooled) CHECK(cache.buffers()->chunk_bytes() > 0);
}

TEST_CASE("properties describe the table and zstd shrinks it", "[table]") {
  std::mt19937_64 rng(6000);
  const Model m = make_model(rng, 400, true);
  uint64_t deletions = 0, key_bytes = 0, value_bytes = 0;
  SequenceNumber lo = kMaxSequenceNumber, hi = 0;
  for (const auto& [k, v] : m) {
    ParsedInternalKey p;
    REQUIRE(parse_internal_key(k, &p));
    deletions += p.kind == ValueKind::Delete ? 1 : 0;
    key_bytes += k.size();
    value_bytes += v.size();
    lo = std::min(lo, p.sequence);
    hi = std::max(hi, p.sequence);
  }
  TableOptions opts;
  opts.block_size = 4096;
  opts.compression = Compression::None;
  const std::string plain = build(m, opts);
  opts.compression = Compression::Zstd;
  TableProperties built;
  const std::string packed = build(m, opts, &built);
  INFO("plain " << plain.size() << " zstd " << packed.size());
  CHECK(packed.size() * 2 < plain.size());

  auto table = open_table(packed);
  const TableProperties& p = table->properties();
  CHECK(p.num_entries == m.size());
  CHECK(p.num_deletions == deletions);
  CHECK(p.raw_key_bytes == key_bytes);
  CHECK(p.raw_value_bytes == value_bytes);
  CHECK(p.data_blocks == built.data_blocks);
  CHECK(p.smallest_key == m.begin()->first);
  CHECK(p.largest_key == m.rbegin()->first);
  CHECK(p.smallest_seq == lo);
  CHECK(p.largest_seq == hi);

  // The file starts with a table header naming the file number.
  auto h = decode_file_header(packed, FileKind::Table, kName);
  REQUIRE(h.ok());
  CHECK(h->file_number == kNumber);
}

TEST_CASE("block cache: hits avoid reads, fill_cache=false leaves it untouched, scan_pool shares",
          "[table]") {
  std::mt19937_64 rng(6100);
  const Model m = make_model(rng, 200, false);
  TableOptions opts;
  opts.block_size = 1024;
  const std::string file = build(m, opts);

  BlockCache cache(1 << 20);
  auto reader = reader_of(file);
  testing::StringObjectReader* raw = reader.get();
  auto table = *Table::open(std::move(reader), kNumber, &cache);
  const int after_open = raw->read_count();

  auto scan = [&](const TableReadOptions& ro) {
    auto it = table->new_iterator(ro);
    size_t n = 0;
    for (it->seek_first(); it->valid(); it->next()) ++n;
    REQUIRE(it->status().ok());
    CHECK(n == m.size());
  };
  TableReadOptions no_fill;
  no_fill.fill_cache = false;
  scan(no_fill);
  CHECK(cache.usage() == 0);
  const int blocks = raw->read_count() - after_open;
  CHECK(static_cast<uint64_t>(blocks) == table->properties().data_blocks);

  // A sweep with scan_pool puts its blocks in the cache's scan pool (the table fits in its
  // quarter of the cache), and a second such sweep reads nothing from the file.
  TableReadOptions sweep;
  sweep.fill_cache = false;
  sweep.scan_pool = true;
  scan(sweep);
  CHECK(cache.usage() > 0);
  CHECK(cache.low_usage() == cache.usage());
  int before = raw->read_count();
  scan(sweep);
  CHECK(raw->read_count() == before);
  CHECK(cache.low_usage() == cache.usage());

  // An ordinary scan finds the same blocks and promotes them out of the pool.
  scan({});
  CHECK(raw->read_count() == before);
  CHECK(cache.usage() > 0);
  CHECK(cache.low_usage() == 0);
  before = raw->read_count();
  scan({});
  CHECK(raw->read_count() == before);  // every block came from the cache
  cache.erase_file(kNumber);
  CHECK(cache.usage() == 0);
}

TEST_CASE("a sweep with readahead reads its blocks in fewer, larger reads", "[table]") {
  const bool zstd = GENERATE(false, true);
  const bool zero_copy = GENERATE(false, true);
  INFO("zstd " << zstd << " zero copy " << zero_copy);
  std::mt19937_64 rng(6300);
  const Model m = make_model(rng, 2000, zstd);
  TableOptions opts;
  opts.block_size = 1024;
  opts.compression = zstd ? Compression::Zstd : Compression::None;
  const std::string file = build(m, opts);

  BlockCache cache(1 << 20);
  auto reader = reader_of(file, zero_copy);
  testing::StringObjectReader* raw = reader.get();
  auto table = *Table::open(std::move(reader), kNumber, &cache);
  const uint64_t blocks = table->properties().data_blocks;
  REQUIRE(blocks > 100);

  auto sweep = [&](bool readahead) {
    TableReadOptions ro;
    ro.fill_cache = false;
    ro.readahead = readahead;
    const int before = raw->read_count();
    auto it = table->new_iterator(ro);
    auto pos = m.begin();
    for (it->seek_first(); it->valid(); it->next(), ++pos) expect_at(*it, m, pos);
    REQUIRE(it->status().ok());
    CHECK(pos == m.end());
    return raw->read_count() - before;
  };
  CHECK(static_cast<uint64_t>(sweep(false)) == blocks);
  // The window doubles from one block to 256 KiB, far more than this table: a handful of reads.
  const int reads = sweep(true);
  CHECK(reads >= 2);
  CHECK(reads <= 16);
  CHECK(cache.usage() == 0);  // neither sweep filled the cache

  // A sweep in the scan pool: blocks the cache holds are skipped, the rest read, all correct.
  TableReadOptions pooled;
  pooled.fill_cache = false;
  pooled.scan_pool = true;
  pooled.readahead = true;
  {
    auto it = table->new_iterator(pooled);
    size_t n = 0;
    for (it->seek_first(); it->valid() && n < m.size() / 2; it->next()) ++n;
  }
  auto it = table->new_iterator(pooled);
  auto pos = m.begin();
  for (it->seek_first(); it->valid(); it->next(), ++pos) expect_at(*it, m, pos);
  REQUIRE(it->status().ok());
  CHECK(pos == m.end());
}

TEST_CASE("every bit flip is detected and never yields a wrong value", "[table][corruption]") {
  const bool zstd = GENERATE(false, true);
  const bool readahead = GENERATE(false, true);
  const uint64_t seed = 7000 + (zstd ? 1 : 0);
  INFO("seed " << seed << " zstd " << zstd << " readahead " << readahead);
  std::mt19937_64 rng(seed);
  const Model m = make_model(rng, 20, true);
  TableOptions opts;
  opts.block_size = 200;
  opts.block_restart_interval = 4;
  opts.compression = zstd ? Compression::Zstd : Compression::None;
  const std::string good = build(m, opts);
  std::vector<std::string> user_keys;
  for (const auto& [k, v] : m) {
    std::string uk(extract_user_key(k));
    if (user_keys.empty() || user_keys.back() != uk) user_keys.push_back(uk);
  }
  INFO("file size " << good.size());

  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= static_cast<char>(1 << (rng() % 8));
    INFO("flipped byte " << i);
    auto opened = Table::open(reader_of(bad), kNumber, nullptr);
    if (!opened.ok()) {
      REQUIRE(opened.status().is_corruption());
      REQUIRE(names_file(opened.status()));
      continue;
    }
    auto table = *opened;
    bool detected = false;
    // A full scan either matches the model entry by entry or stops with a corruption error.
    TableReadOptions ro;
    ro.readahead = readahead;
    auto it = table->new_iterator(ro);
    auto pos = m.begin();
    for (it->seek_first(); it->valid(); it->next(), ++pos) {
      REQUIRE(pos != m.end());
      REQUIRE(it->key() == pos->first);
      REQUIRE(it->value() == pos->second);
    }
    if (!it->status().ok()) {
      REQUIRE(it->status().is_corruption());
      REQUIRE(names_file(it->status()));
      detected = true;
    } else {
      REQUIRE(pos == m.end());
    }
    for (const std::string& uk : user_keys) {
      Table::GetResult got;
      Status s = table->get(uk, kMaxSequenceNumber, &got);
      if (!s.ok()) {
        REQUIRE(s.is_corruption());
        REQUIRE(names_file(s));
        detected = true;
        continue;
      }
      Version want;
      REQUIRE(model_get(m, uk, kMaxSequenceNumber, &want));
      REQUIRE(got.found);
      REQUIRE(got.kind == want.kind);
      REQUIRE(got.value == want.value);
      REQUIRE(got.sequence == want.seq);
    }
    CHECK(detected);
  }
}

TEST_CASE("truncated tables fail to open with corruption", "[table][corruption]") {
  std::mt19937_64 rng(7100);
  const Model m = make_model(rng, 30, false);
  TableOptions opts;
  opts.block_size = 256;
  const std::string good = build(m, opts);
  for (size_t len = 0; len < good.size(); ++len) {
    auto r = Table::open(reader_of(good.substr(0, len)), kNumber, nullptr);
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.status().is_corruption());
    REQUIRE(names_file(r.status()));
  }
  // Extra bytes after the footer are no table either.
  auto r = Table::open(reader_of(good + "x"), kNumber, nullptr);
  CHECK(r.status().is_corruption());
}

TEST_CASE("a table opened under the wrong file number is rejected", "[table][corruption]") {
  std::mt19937_64 rng(7200);
  const std::string file = build(make_model(rng, 5, false), TableOptions{});
  auto r = Table::open(reader_of(file), kNumber + 1, nullptr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().is_corruption());
  CHECK(names_file(r.status()));
}

TEST_CASE("builder rejects bad input and aborts unfinished tables", "[table]") {
  const int aborted_before = StringWriter::aborted;
  {
    std::string file;
    TableBuilder b(TableOptions{}, std::make_unique<StringWriter>(&file), kNumber);
    CHECK(b.finish().code() == Code::InvalidArgument);  // no entries
    CHECK(b.add("short", "v").code() == Code::InvalidArgument);
    const std::string k2 = make_internal_key("b", 5, ValueKind::Value, 0);
    REQUIRE(b.add(k2, "v").ok());
    CHECK(b.add(k2, "again").code() == Code::InvalidArgument);
    CHECK(b.add(make_internal_key("a", 9, ValueKind::Value, 0), "v").code() ==
          Code::InvalidArgument);
    CHECK(b.add(make_internal_key("b", 6, ValueKind::Value, 0), "v").code() ==
          Code::InvalidArgument);  // newer versions sort first
    std::string bad_kind = make_internal_key("c", 1, ValueKind::Value, 0);
    bad_kind[bad_kind.size() - 16] = 7;
    CHECK(b.add(bad_kind, "v").code() == Code::InvalidArgument);
    CHECK(b.estimated_file_size() > kFileHeaderSize);
  }
  CHECK(StringWriter::aborted == aborted_before + 1);

  // Writer errors are sticky and the table is aborted.
  {
    std::string file;
    TableOptions opts;
    opts.block_size = 128;
    TableBuilder b(opts, std::make_unique<StringWriter>(&file, 600), kNumber);
    Status last;
    for (int i = 0; i < 100 && last.ok(); ++i) {
      last = b.add(make_internal_key("k" + std::to_string(1000 + i), 1, ValueKind::Value, 0),
                   std::string(50, 'x'));
    }
    CHECK(last.is_io_error());
    CHECK(b.finish().is_io_error());
  }
  CHECK(StringWriter::aborted == aborted_before + 2);
}

TEST_CASE("a table of large entries and a single entry", "[table]") {
  std::mt19937_64 rng(7300);
  Model m;
  m.emplace(make_internal_key("big", 3, ValueKind::Value, 0), std::string(300000, 'z'));
  std::string noise(200000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  m.emplace(make_internal_key("noise", 4, ValueKind::Value, 0), noise);
  TableOptions opts;
  opts.block_size = 4096;
  auto table = open_table(build(m, opts));
  CHECK(table->properties().data_blocks == 2);
  Table::GetResult got;
  REQUIRE(table->get("big", 10, &got).ok());
  CHECK(got.found);
  CHECK(got.value.size() == 300000);
  REQUIRE(table->get("noise", 10, &got).ok());
  CHECK(got.value == noise);
  REQUIRE(table->get("big", 2, &got).ok());
  CHECK_FALSE(got.found);

  Model one;
  one.emplace(make_internal_key("\xff\xff", 1, ValueKind::Delete, 0), "");
  auto t1 = open_table(build(one, TableOptions{}));
  auto it = t1->new_iterator();
  it->seek_last();
  REQUIRE(it->valid());
  CHECK(it->key() == one.begin()->first);
  it->prev();
  CHECK_FALSE(it->valid());
  REQUIRE(t1->get("\xff\xff", 5, &got).ok());
  CHECK(got.found);
  CHECK(got.kind == ValueKind::Delete);
}

TEST_CASE("two-level iteration skips empty blocks and stops at a failing block", "[table]") {
  // Blocks 0, 2, 3 and 6 are empty; the others hold consecutive slices of the model.
  const uint64_t seed = 7400;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const Model m = make_model(rng, 40, false);
  std::vector<std::shared_ptr<const Block>> blocks;
  BlockBuilder index(1);
  auto it_m = m.begin();
  const size_t per_block = (m.size() + 3) / 4;
  std::string last_user = "user/";
  std::vector<size_t> counts;
  for (uint64_t b = 0; b < 8; ++b) {
    BlockBuilder data(3);
    const bool empty = b == 0 || b == 2 || b == 3 || b == 6 || it_m == m.end();
    // A block ends at a user-key boundary, so the padded separators below stay valid.
    for (size_t i = 0; !empty && it_m != m.end(); ++i, ++it_m) {
      if (i >= per_block && !data.empty() &&
          extract_user_key(it_m->first) != extract_user_key(data.last_key())) {
        break;
      }
      data.add(it_m->first, it_m->second);
    }
    counts.push_back(data.num_entries());
    if (!data.empty()) last_user.assign(extract_user_key(data.last_key()));
    blocks.push_back(*Block::create(BlockContents::copy_of(data.finish()), kName, b * 1000));
    // Separator: the last user key so far padded with b + 1 zero bytes, which sorts after
    // every key of this block and before every key of the next (all user keys have one length).
    const std::string sep =
        make_internal_key(last_user + std::string(b + 1, '\0'), 1, ValueKind::Value, 0);
    std::string handle;
    encode_block_handle({b * 1000, 10}, &handle);
    index.add(sep, handle);
  }
  auto index_block = *Block::create(BlockContents::copy_of(index.finish()), kName, 99);
  uint64_t failing = ~uint64_t{0};
  DataBlockLoader loader = [&](const BlockHandle& h) -> Result<std::unique_ptr<BlockIterator>> {
    if (h.offset == failing) return Status::corruption(kName + ": injected at offset 1");
    return std::make_unique<BlockIterator>(blocks[h.offset / 1000], kName, h.offset);
  };

  auto it = new_two_level_iterator(std::make_unique<BlockIterator>(index_block, kName, 99), loader,
                                   kName);
  auto pos = m.begin();
  for (it->seek_first(); it->valid(); it->next(), ++pos) expect_at(*it, m, pos);
  CHECK(pos == m.end());
  auto rpos = m.rbegin();
  for (it->seek_last(); it->valid(); it->prev(), ++rpos) {
    REQUIRE(rpos != m.rend());
    REQUIRE(it->key() == rpos->first);
  }
  CHECK(rpos == m.rend());
  for (const auto& [k, v] : m) {
    it->seek(k);
    expect_at(*it, m, m.find(k));
  }

  // A block that fails to load ends the iteration with its error, for good.
  failing = 4000;
  auto bad = new_two_level_iterator(std::make_unique<BlockIterator>(index_block, kName, 99), loader,
                                    kName);
  size_t n = 0;
  for (bad->seek_first(); bad->valid(); bad->next()) ++n;
  CHECK(n == counts[1]);
  CHECK(bad->status().is_corruption());
  bad->seek_first();
  CHECK_FALSE(bad->valid());
  CHECK(bad->status().is_corruption());
}
