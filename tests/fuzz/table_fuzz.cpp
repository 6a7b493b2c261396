// libFuzzer target: the SSTable reader (sstable/table.h).
//
// The input is a whole table file. It is opened twice: as it is (with no block cache), and with
// every checksum recomputed (fuzz_support.h, through a small block cache), so the index, block
// and properties parsers see mutated bytes. The table's file number is the one its header names.
// After Table::open succeeds the table is walked both ways, sought and queried with get().
//
// Properties: nothing crashes, errors are Corruption, iterators pass iterator_checks.h. When the
// table is well formed as far as a checksum cannot tell (an independent walk of the index and
// data blocks finds every data block with well-formed keys in strictly ascending order, each
// separator >= its block's last key and < the next block's first key, the entry count of the
// properties, and every block within the sizes the properties allow), seeks must be exact and get()
// must return, for a key and snapshot, exactly the newest entry of that key at or below the
// snapshot in the forward walk. Whatever the shape, a get() that finds something after a complete
// forward walk returns an entry of that walk: never invented data. (Tables with a block whose
// restart lies inside an entry, the known issue in fuzz_support.h, get these comparisons only with
// SKV_FUZZ_STRICT=1.)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "cache/block_cache.h"
#include "fuzz_support.h"
#include "iterator_checks.h"
#include "sstable/table.h"
#include "sstable/table_properties.h"

using namespace skv;

namespace {

constexpr size_t kMaxEntries = 1 << 16;
constexpr size_t kMaxBack = 256;
constexpr size_t kMaxGets = 48;

struct Shape {
  // Every data block decodes with well-formed keys, keys ascend strictly across the table, each
  // separator bounds its block as the writer guarantees, and the entries add up.
  bool well_formed = false;
  // Some block has a restart inside an entry (the known issue in fuzz_support.h).
  bool misframed = false;
};

// An independent reading of the table's structure: footer, index, data blocks, through the
// block-level code only. A block larger than its table's properties allow (table_block_limits)
// makes the table malformed: the reader refuses it as corrupt.
Shape inspect(const std::string& bytes, const TableProperties& props) {
  const uint64_t num_entries = props.num_entries;
  const TableBlockLimits limits = table_block_limits(props);
  Shape shape;
  if (bytes.size() < kFileHeaderSize + kTableFooterSize) return shape;
  fuzz::StringObjectReader file("oracle", bytes);
  TableFooter f;
  std::string_view footer(bytes.data() + bytes.size() - kTableFooterSize, kTableFooterSize);
  if (!decode_table_footer(footer, "oracle", 0, &f).ok()) return shape;
  Result<BlockContents> index_data = read_block(file, f.index, limits.index);
  if (!index_data.ok()) return shape;
  shape.misframed = fuzz::restarts_misframed(index_data->view());
  Result<std::shared_ptr<const Block>> index = Block::create(std::move(*index_data), "oracle", 0);
  if (!index.ok()) return shape;
  BlockIterator ii(*index, "oracle", 0);
  bool good = true;
  std::string prev_key;  // last data key seen
  std::string prev_separator;
  uint64_t entries = 0;
  size_t blocks = 0;
  for (ii.seek_first(); ii.valid() && blocks < kMaxEntries; ii.next(), ++blocks) {
    const std::string separator(ii.key());
    std::string_view v = ii.value();
    BlockHandle h;
    Result<BlockContents> data = Status::corruption("bad handle");
    if (decode_block_handle(&v, &h) && v.empty()) data = read_block(file, h, limits.data);
    if (!data.ok()) {
      good = false;
      continue;
    }
    if (fuzz::restarts_misframed(data->view())) shape.misframed = true;
    Result<std::shared_ptr<const Block>> block = Block::create(std::move(*data), "oracle", 0);
    if (!block.ok()) {
      good = false;
      continue;
    }
    BlockIterator di(*block, "oracle", 0);
    bool first = true;
    for (di.seek_first(); di.valid() && good; di.next(), ++entries) {
      ParsedInternalKey parsed;
      if (!parse_internal_key(di.key(), &parsed)) good = false;  // an unknown kind
      if (first && !prev_separator.empty() &&
          compare_internal_keys(prev_separator, di.key()) >= 0) {
        good = false;  // the previous separator must sort before this block
      }
      if (!prev_key.empty() && compare_internal_keys(prev_key, di.key()) >= 0) good = false;
      prev_key.assign(di.key());
      first = false;
      if (entries > kMaxEntries) good = false;
    }
    if (!di.status().ok() || first) good = false;  // a bad or empty data block
    if (good && compare_internal_keys(separator, prev_key) < 0) good = false;
    prev_separator = separator;
  }
  shape.well_formed = good && ii.status().ok() && !ii.valid() && entries == num_entries;
  return shape;
}

// The newest entry of `user_key` with sequence <= snapshot in an ascending walk, or null.
const std::pair<std::string, std::string>* newest_at(const fuzz::Entries& fwd,
                                                     std::string_view user_key,
                                                     SequenceNumber snapshot) {
  for (const auto& e : fwd) {
    ParsedInternalKey p;
    if (!parse_internal_key(e.first, &p) || p.user_key != user_key) continue;
    if (p.sequence <= snapshot) return &e;
  }
  return nullptr;
}

// `oracle`: the table is well formed, results must match the walk exactly (or, when a block is
// misframed, be Corruption). `trusted`: a found entry must be one the walk yields.
void check_get(const Table& table, const fuzz::Entries& fwd, bool oracle, bool trusted,
               bool misframed, std::string_view user_key, SequenceNumber snapshot) {
  Table::GetResult r;
  Status s = table.get(user_key, snapshot, &r);
  if (!s.ok()) {
    SKV_FUZZ_CHECK(s.is_corruption(), s.to_string());
    SKV_FUZZ_CHECK(!oracle || misframed, "get failed on a well-formed table: " + s.to_string());
    return;
  }
  if (r.found) {
    SKV_FUZZ_CHECK(r.sequence <= std::min(snapshot, kMaxSequenceNumber), "get above snapshot");
    // Never invented: the entry is one the forward walk yields.
    const std::string ikey = make_internal_key(user_key, r.sequence, r.kind, r.timestamp);
    if (trusted && !fwd.empty()) {
      bool seen = false;
      for (const auto& e : fwd) {
        if (e.first == ikey && e.second == r.value) seen = true;
      }
      SKV_FUZZ_CHECK(seen, "get returned an entry the iterator never yields");
    }
  }
  if (!oracle) return;
  const auto* want = newest_at(fwd, user_key, std::min(snapshot, kMaxSequenceNumber));
  SKV_FUZZ_CHECK(r.found == (want != nullptr), "get found/not found differs from the walk");
  if (want != nullptr) {
    SKV_FUZZ_CHECK(make_internal_key(user_key, r.sequence, r.kind, r.timestamp) == want->first &&
                       r.value == want->second,
                   "get returned another entry than the walk");
  }
}

void check_table(std::string bytes, bool fixed) {
  const uint64_t number = bytes.size() >= 16 ? decode_fixed64(bytes.data() + 8) : 0;
  std::unique_ptr<BlockCache> cache;
  if (fixed) cache = std::make_unique<BlockCache>(size_t{256} << 10);
  auto file = std::make_unique<fuzz::StringObjectReader>("000042.sst", bytes, fixed);
  Result<std::shared_ptr<Table>> opened = Table::open(std::move(file), number, cache.get());
  if (!opened.ok()) {
    const Status& s = opened.status();
    SKV_FUZZ_CHECK(fuzz::is_header_refusal(s), s.to_string());
    return;
  }
  const Table& table = **opened;
  SKV_FUZZ_CHECK(table.properties().num_entries > 0, "a table has entries");
  const Shape shape = inspect(bytes, table.properties());
  const bool trusted = fuzz::strict_mode() || !shape.misframed;
  const bool shaped = shape.well_formed && trusted;

  TableReadOptions ro;
  ro.fill_cache = fixed;
  std::unique_ptr<InternalIterator> it = table.new_iterator(ro);
  bool ascending = false;
  fuzz::Entries fwd =
      fuzz::check_iterator(it.get(), bytes, trusted, shaped, kMaxEntries, kMaxBack, &ascending);
  SKV_FUZZ_CHECK(!shaped || shape.misframed || ascending,
                 "the iterator failed on a well-formed table");
  const bool oracle = shaped && ascending;
  if (oracle) {
    SKV_FUZZ_CHECK(fwd.size() == table.properties().num_entries, "entry count");
    // The bloom filter was written over these keys; a miss would hide data.
    for (const auto& e : fwd) {
      if (!table.may_contain(extract_user_key(e.first))) return;  // a rewritten filter
    }
  }

  const size_t step = fwd.size() <= kMaxGets / 3 ? 1 : fwd.size() * 3 / kMaxGets;
  for (size_t i = 0; i < fwd.size(); i += step) {
    ParsedInternalKey p;
    if (!parse_internal_key(fwd[i].first, &p)) continue;
    check_get(table, fwd, oracle, trusted, shape.misframed, p.user_key, p.sequence);
    check_get(table, fwd, oracle, trusted, shape.misframed, p.user_key, kMaxSequenceNumber);
    if (p.sequence > 0) {
      check_get(table, fwd, oracle, trusted, shape.misframed, p.user_key, p.sequence - 1);
    }
  }
  // Keys that are probably absent: slices of the input.
  for (size_t i = 0; i < 6 && !bytes.empty(); ++i) {
    const size_t at = (bytes.size() * i) / 6;
    check_get(table, fwd, oracle, trusted, shape.misframed,
              std::string_view(bytes).substr(at, 1 + i * 3), UINT64_MAX);
  }
  check_get(table, fwd, oracle, trusted, shape.misframed, "", UINT64_MAX);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_view(data, size);
  check_table(std::string(input), /*fixed=*/false);
  std::string fixed(input);
  fuzz::fix_table(&fixed);
  if (fixed != input) check_table(std::move(fixed), /*fixed=*/true);
  return 0;
}
