// libFuzzer target: SSTable blocks (sstable/block.h) and their framing (sstable/block_format.h).
//
// The first input byte picks what the rest is (its low two bits; bit 4 makes the in-memory file
// hand out views of its own bytes instead of copies):
//   0  block contents: Block::create, then BlockIterator walks both ways and seeks;
//   1  a stored block (payload ‖ type ‖ crc) whose checksum is recomputed first: read_block,
//      then as 0 on what it returns;
//   2  a stored block as it is: read_block, then as 0;
//   3  the small fixed decoders: the table footer (as it is and with its checksum recomputed),
//      a block handle, and the properties block payload.
// Properties: nothing crashes; errors are Corruption; iterators pass iterator_checks.h with walk
// comparison and exact seeks (a block that Block::create accepts and that walks forward in
// strictly ascending order must walk back the same way and seek exactly; blocks with a restart
// inside an entry only when SKV_FUZZ_STRICT=1, see fuzz_support.h); read_block returns an
// uncompressed payload byte for byte; the footer round-trips byte for byte, handles and properties
// round-trip to equal values with an encoding no longer than the input (byte-identical when as
// long).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "iterator_checks.h"
#include "sstable/block.h"
#include "sstable/block_format.h"
#include "sstable/table_properties.h"

using namespace skv;

namespace {

constexpr size_t kMaxEntries = 1 << 16;
constexpr size_t kMaxBack = 256;

void check_block(BlockContents contents, std::string_view raw) {
  const size_t size = contents.size;
  // See fuzz_support.h: a restart inside an entry is a known issue, compared only when strict.
  const bool compare = fuzz::strict_mode() || !fuzz::restarts_misframed(contents.view());
  Result<std::shared_ptr<const Block>> block = Block::create(std::move(contents), "fuzz.sst", 0);
  if (!block.ok()) {
    SKV_FUZZ_CHECK(block.status().is_corruption(), block.status().to_string());
    return;
  }
  const Block& b = **block;
  SKV_FUZZ_CHECK(b.num_restarts() >= 1 && b.restarts_offset() < size, "restart array");
  SKV_FUZZ_CHECK(b.restart_point(0) == 0, "first restart");
  BlockIterator it(*block, "fuzz.sst", 0);
  bool ascending = false;
  fuzz::check_iterator(&it, raw, compare, compare, kMaxEntries, kMaxBack, &ascending);
}

void check_stored_block(std::string stored, bool fix, bool zero_copy, std::string_view raw) {
  if (stored.size() < kBlockTrailerSize) return;
  BlockHandle h{0, stored.size() - kBlockTrailerSize};
  if (fix) fuzz::fix_block(&stored, h);
  const std::string payload = stored.substr(0, h.size);
  const uint8_t type = static_cast<uint8_t>(stored[h.size]);
  fuzz::StringObjectReader file("fuzz.sst", std::move(stored), zero_copy);
  Result<BlockContents> contents = read_block(file, h);
  if (!contents.ok()) {
    SKV_FUZZ_CHECK(contents.status().is_corruption(), contents.status().to_string());
    return;
  }
  SKV_FUZZ_CHECK(contents->size <= kMaxBlockSize, "decoded block too large");
  if (type == kBlockTypeNone) {
    SKV_FUZZ_CHECK(contents->view() == payload, "uncompressed block differs from its payload");
  } else {
    SKV_FUZZ_CHECK(type == kBlockTypeZstd, "unknown compression type accepted");
  }
  check_block(std::move(*contents), raw);
}

bool same_properties(const TableProperties& a, const TableProperties& b) {
  return a.num_entries == b.num_entries && a.num_deletions == b.num_deletions &&
         a.raw_key_bytes == b.raw_key_bytes && a.raw_value_bytes == b.raw_value_bytes &&
         a.data_blocks == b.data_blocks && a.smallest_key == b.smallest_key &&
         a.largest_key == b.largest_key && a.smallest_seq == b.smallest_seq &&
         a.largest_seq == b.largest_seq;
}

void check_footer(std::string_view input) {
  TableFooter f;
  Status s = decode_table_footer(input, "fuzz.sst", 0, &f);
  if (!s.ok()) {
    SKV_FUZZ_CHECK(s.is_corruption(), s.to_string());
    return;
  }
  std::string enc;
  encode_table_footer(f, &enc);
  SKV_FUZZ_CHECK(enc == input.substr(0, kTableFooterSize), "footer does not round-trip");
}

void check_small_decoders(std::string_view input) {
  check_footer(input);
  if (input.size() >= kTableFooterSize) {
    std::string fixed(input.substr(0, kTableFooterSize));
    encode_fixed32(fixed.data() + 60, crc32c::mask(crc32c::value(fixed.data(), 60)));
    check_footer(fixed);
  }

  std::string_view in = input;
  BlockHandle h;
  if (decode_block_handle(&in, &h)) {
    const size_t consumed = input.size() - in.size();
    std::string enc;
    encode_block_handle(h, &enc);
    SKV_FUZZ_CHECK(enc.size() <= consumed, "handle re-encoding is longer");
    if (enc.size() == consumed) SKV_FUZZ_CHECK(enc == input.substr(0, consumed), "handle bytes");
    std::string_view again = enc;
    BlockHandle h2;
    SKV_FUZZ_CHECK(decode_block_handle(&again, &h2) && again.empty(), "handle re-decode");
    SKV_FUZZ_CHECK(h2.offset == h.offset && h2.size == h.size, "handle does not round-trip");
  }

  TableProperties p;
  if (decode_table_properties(input, &p)) {
    SKV_FUZZ_CHECK(p.num_deletions <= p.num_entries && p.smallest_seq <= p.largest_seq,
                   "properties checks");
    std::string enc;
    encode_table_properties(p, &enc);
    SKV_FUZZ_CHECK(enc.size() <= input.size(), "properties re-encoding is longer");
    if (enc.size() == input.size()) SKV_FUZZ_CHECK(enc == input, "properties bytes");
    TableProperties p2;
    SKV_FUZZ_CHECK(decode_table_properties(enc, &p2) && same_properties(p, p2),
                   "properties do not round-trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string_view rest = fuzz::as_view(data + 1, size - 1);
  const bool zero_copy = (mode & 0x10) != 0;
  switch (mode & 3) {
    case 0:
      check_block(BlockContents::copy_of(rest), rest);
      break;
    case 1:
      check_stored_block(std::string(rest), /*fix=*/true, zero_copy, rest);
      break;
    case 2:
      check_stored_block(std::string(rest), /*fix=*/false, zero_copy, rest);
      break;
    default:
      check_small_decoders(rest);
      break;
  }
  return 0;
}
