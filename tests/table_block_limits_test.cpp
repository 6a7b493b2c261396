// skv-test-modules: util sstable counting_alloc
// What a table's properties allow its blocks to hold (table_block_limits), and what a reader
// does with a block that claims more or fails its checks: it refuses the claim before allocating
// for it, and remembers a corrupt block instead of reading and decompressing it again on every
// read. Memory is measured with the counting allocator (bytes requested), reads by counting
// calls on the file; no timings.

#include <zstd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "format/internal_key.h"
#include "sstable/block.h"
#include "sstable/block_format.h"
#include "sstable/table.h"
#include "sstable/table_builder.h"
#include "sstable/table_properties.h"
#include "support/counting_alloc/counting_alloc.h"
#include "support/string_object_writer.h"
#include "util/coding.h"
#include "util/crc32c.h"

using namespace skv;
using namespace skv::testing;

namespace {

constexpr uint64_t kNumber = 7;
const std::string kName = "000007.sst";

// Counts the reads that touch [watch_begin, watch_end).
class CountingReader final : public ObjectReader {
 public:
  explicit CountingReader(std::string data) : data_(std::move(data)) {}
  const std::string& name() const override { return kName; }
  uint64_t size() const override { return data_.size(); }
  Status read_at(uint64_t offset, size_t n, char* scratch,
                 std::string_view* result) const override {
    if (offset < watch_end && offset + n > watch_begin) ++watched_reads;
    n = offset >= data_.size() ? 0 : std::min<size_t>(n, data_.size() - offset);
    if (n > 0) std::memcpy(scratch, data_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return Status::OK();
  }
  uint64_t watch_begin = 0, watch_end = 0;
  mutable int watched_reads = 0;

 private:
  std::string data_;
};

using Entries = std::map<std::string, std::string, InternalKeyLess>;

std::string build(const Entries& entries, const TableOptions& opts) {
  std::string file;
  TableBuilder b(opts, std::make_unique<StringObjectWriter>(&file), kNumber);
  for (const auto& [k, v] : entries) REQUIRE(b.add(k, v).ok());
  REQUIRE(b.finish().ok());
  return file;
}

std::string random_bytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// One data block of about 64 KiB of incompressible values, stored uncompressed at offset 64.
Entries one_block_of_entries() {
  std::mt19937_64 rng(99);
  Entries m;
  for (int i = 0; i < 64; ++i) {
    m.emplace(make_internal_key("key" + std::to_string(100 + i), 5, ValueKind::Value, 0),
              random_bytes(rng, 1000));
  }
  return m;
}

TableOptions one_block_options() {
  TableOptions opts;
  opts.block_size = 1 << 20;
  opts.compression = Compression::None;
  return opts;
}

// The handles of the data blocks, from the index block.
std::vector<BlockHandle> data_blocks(const std::string& file) {
  TableFooter f;
  const uint64_t at = file.size() - kTableFooterSize;
  REQUIRE(decode_table_footer(std::string_view(file).substr(at), kName, at, &f).ok());
  CountingReader reader(file);
  auto contents = read_block(reader, f.index);
  REQUIRE(contents.ok());
  auto index = Block::create(std::move(contents).value(), kName, f.index.offset);
  REQUIRE(index.ok());
  std::vector<BlockHandle> out;
  BlockIterator it(*index, kName, f.index.offset);
  for (it.seek_first(); it.valid(); it.next()) {
    std::string_view v = it.value();
    BlockHandle h;
    REQUIRE(decode_block_handle(&v, &h));
    out.push_back(h);
  }
  REQUIRE(it.status().ok());
  return out;
}

// A zstd frame that says it holds `claimed` bytes (of zeros) in a few kilobytes.
std::string frame_claiming(uint64_t claimed) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  REQUIRE(cctx != nullptr);
  REQUIRE_FALSE(ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(cctx, claimed)));
  const std::vector<char> zeros(128 << 10, '\0');
  std::string out;
  std::vector<char> buf(ZSTD_CStreamOutSize());
  uint64_t fed = 0;
  bool done = false;
  while (!done) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), claimed - fed));
    const bool last = fed + n == claimed;
    ZSTD_inBuffer in{zeros.data(), n, 0};
    for (;;) {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      const size_t left = ZSTD_compressStream2(cctx, &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      REQUIRE_FALSE(ZSTD_isError(left));
      out.append(buf.data(), o.pos);
      if (last ? left == 0 : in.pos == in.size) break;
    }
    fed += n;
    done = last;
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

// `file` with the stored block at `h` replaced by a zstd block: raw_size `claimed`, a frame
// claiming the same, and padding to the block's size (read as a second frame, which fails), under
// a correct checksum.
std::string with_zstd_block(std::string file, const BlockHandle& h, uint64_t claimed) {
  std::string payload;
  put_varint64(&payload, claimed);
  payload += frame_claiming(claimed);
  INFO("crafted payload " << payload.size() << " bytes, block " << h.size);
  REQUIRE(payload.size() + 8 <= h.size);
  payload.resize(h.size, '\x5a');
  payload.push_back(static_cast<char>(kBlockTypeZstd));
  put_fixed32(&payload, crc32c::mask(crc32c::value(payload.data(), payload.size())));
  file.replace(h.offset, payload.size(), payload);
  return file;
}

bool names_block(const Status& s, uint64_t offset) {
  return s.is_corruption() && s.message().find(kName) != std::string::npos &&
         s.message().find("at offset " + std::to_string(offset)) != std::string::npos;
}

// Reads the damaged block three ways, `rounds` times each; every read must fail with the same
// corruption naming the file and the block's offset.
void read_damaged(const Table& table, const BlockHandle& h, int rounds) {
  std::string first;
  for (int round = 0; round < rounds; ++round) {
    auto it = table.new_iterator();
    it->seek_first();
    CHECK_FALSE(it->valid());
    Status s = it->status();
    INFO(s.to_string());
    CHECK(names_block(s, h.offset));
    if (first.empty()) first = s.to_string();
    CHECK(s.to_string() == first);
    Table::GetResult got;
    s = table.get("key120", kMaxSequenceNumber, &got);
    CHECK(s.to_string() == first);
    auto back = table.new_iterator();
    back->seek_last();
    CHECK(back->status().to_string() == first);
  }
}

}  // namespace

TEST_CASE("every block a builder writes fits the limits its properties give", "[table]") {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 40; ++trial) {
    INFO("trial " << trial);
    Entries m;
    const int keys = 1 + static_cast<int>(rng() % 300);
    const size_t key_len = trial == 0 ? kMaxKeySize : 1 + rng() % 40;
    for (int i = 0; i < keys; ++i) {
      std::string user = random_bytes(rng, key_len);
      const size_t vlen = rng() % 8 == 0 ? rng() % 20000 : rng() % 100;
      const bool compressible = rng() % 2 == 0;
      std::string v = compressible ? std::string(vlen, 'c') : random_bytes(rng, vlen);
      m.emplace(make_internal_key(user, 1 + rng() % 1000, ValueKind::Value, 0), v);
    }
    TableOptions opts;
    opts.block_size = 1 + rng() % 100000;
    opts.block_restart_interval = 1 + static_cast<int>(rng() % 20);
    opts.compression = rng() % 2 == 0 ? Compression::Zstd : Compression::None;
    opts.bloom_bits_per_key = static_cast<int>(rng() % 120);
    const std::string file = build(m, opts);

    auto opened = Table::open(std::make_unique<CountingReader>(file), kNumber, nullptr);
    INFO(opened.status().to_string());
    REQUIRE(opened.ok());
    const TableBlockLimits limits = table_block_limits((*opened)->properties());
    // Read every block back with read_block and check its decoded size.
    TableFooter f;
    const uint64_t at = file.size() - kTableFooterSize;
    REQUIRE(decode_table_footer(std::string_view(file).substr(at), kName, at, &f).ok());
    CountingReader reader(file);
    auto props = read_block(reader, f.properties);
    REQUIRE(props.ok());
    CHECK(props->size <= kMaxPropertiesBlockSize);
    auto index = read_block(reader, f.index);
    REQUIRE(index.ok());
    CHECK(index->size <= limits.index);
    if (f.filter.size != 0) {
      auto filter = read_block(reader, f.filter);
      REQUIRE(filter.ok());
      CHECK(filter->size <= limits.filter);
    }
    auto it = (*opened)->new_iterator();
    size_t n = 0;
    for (it->seek_first(); it->valid(); it->next()) ++n;
    REQUIRE(it->status().ok());
    CHECK(n == m.size());
    for (const BlockHandle& h : data_blocks(file)) {
      auto data = read_block(reader, h);
      REQUIRE(data.ok());
      CHECK(data->size <= limits.data);
    }
  }
}

TEST_CASE("a zstd block claiming more than its table allows is refused before allocating",
          "[table][corruption]") {
  const std::string good = build(one_block_of_entries(), one_block_options());
  const BlockHandle h = data_blocks(good).front();
  const std::string bad = with_zstd_block(good, h, kMaxBlockSize);
  auto reader = std::make_unique<CountingReader>(bad);
  CountingReader* raw = reader.get();
  raw->watch_begin = h.offset;
  raw->watch_end = h.end();
  BlockCache cache(1 << 20);
  auto opened = Table::open(std::move(reader), kNumber, &cache);
  REQUIRE(opened.ok());
  CHECK(table_block_limits((*opened)->properties()).data < 128 << 10);

  const size_t base = allocation_counts().live_bytes;
  reset_peak();
  read_damaged(**opened, h, 3);
  const size_t peak = allocation_counts().peak_live_bytes - base;
  INFO("peak " << peak << " bytes");
  CHECK(peak < 1 << 20);
  // The block was read once; the later reads were answered from what the first one found.
  CHECK(raw->watched_reads == 1);
}

TEST_CASE("a corrupt block is remembered, not read and decompressed again", "[table][corruption]") {
  const std::string good = build(one_block_of_entries(), one_block_options());
  const BlockHandle h = data_blocks(good).front();
  const bool with_cache = GENERATE(false, true);
  const int damage = GENERATE(0, 1);
  INFO("cache " << with_cache << " damage " << damage);
  std::string bad;
  if (damage == 0) {
    bad = good;
    bad[h.offset + 100] ^= 0x10;  // checksum mismatch
  } else {
    // Within what the table allows, so it is decompressed: the frame fills 40,000 bytes, then
    // the padding after it fails.
    bad = with_zstd_block(good, h, 40000);
  }
  auto reader = std::make_unique<CountingReader>(bad);
  CountingReader* raw = reader.get();
  raw->watch_begin = h.offset;
  raw->watch_end = h.end();
  BlockCache cache(1 << 20);
  auto opened = Table::open(std::move(reader), kNumber, with_cache ? &cache : nullptr);
  REQUIRE(opened.ok());
  const AllocationCounts before = allocation_counts();
  read_damaged(**opened, h, 5);
  CHECK(raw->watched_reads == 1);
  // Fifteen failed reads, one block's worth of bytes allocated.
  CHECK(allocation_counts().allocated_bytes - before.allocated_bytes < 2 * h.size + (64 << 10));
}
