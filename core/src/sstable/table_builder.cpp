// The SSTable file format (docs/sstable.md explains it in full):
//
//   table      := file_header data_block+ filter_block? index_block properties_block footer
//   file_header:= 64 bytes, format/file_header.h, kind = Table, the table's file number
//   data_block := stored_block of a block (block_builder.h) whose keys are internal keys in
//                 strictly increasing internal-key order and whose values are the user values
//   filter_block := stored_block of a bloom filter over the distinct user keys (bloom.h)
//   index_block:= stored_block of a block (restart interval 1) with one entry per data block:
//                 key = separator, value = block_handle of the data block; a separator is an
//                 internal key >= the block's last key and < the next block's first key
//   properties_block := stored_block of the properties (table_properties.h)
//   footer     := 64 bytes: handles of index, filter and properties, magic, crc (block_format.h)
//   stored_block := payload ‖ compression_type:u8 ‖ masked crc32c(payload ‖ type):fixed32
//
// An encrypted table has the same layout with the header's envelope filled, every stored_block a
// sealed_block (sealed at its offset) and an 80-byte sealed footer (block_format.h).
//
// Data blocks are written back to back from offset 64. A data block is cut when its size
// reaches options.block_size. The filter and properties blocks are never compressed.

#include "sstable/table_builder.h"

#include <algorithm>

#include "crypto/cipher_source.h"
#include "format/file_header.h"
#include "format/internal_key.h"
#include "sstable/block_builder.h"
#include "sstable/block_format.h"
#include "sstable/bloom.h"
#include "sstable/table_properties.h"
#include "util/status_macros.h"

namespace skv {

namespace {

// A short internal key k with last <= k < next, or `last` itself when none is shorter.
// REQUIRES: compare_internal_keys(last, next) < 0.
std::string separator_between(std::string_view last, std::string_view next) {
  const std::string_view a = extract_user_key(last);
  const std::string_view b = extract_user_key(next);
  const size_t limit = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < limit && a[i] == b[i]) ++i;
  if (i < limit) {
    const auto ca = static_cast<unsigned char>(a[i]);
    const auto cb = static_cast<unsigned char>(b[i]);
    // a[0..i] + (ca + 1) is > a (longer than i only when a has more bytes) and < b.
    if (ca < 0xff && ca + 1 < cb && i + 1 < a.size()) {
      std::string user(a.substr(0, i));
      user.push_back(static_cast<char>(ca + 1));
      return make_internal_key(user, kMaxSequenceNumber, kValueKindForSeek, 0);
    }
  }
  return std::string(last);
}

// A short internal key k >= last (used after the last data block).
std::string successor_of(std::string_view last) {
  const std::string_view a = extract_user_key(last);
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    const auto c = static_cast<unsigned char>(a[i]);
    if (c != 0xff) {
      std::string user(a.substr(0, i));
      user.push_back(static_cast<char>(c + 1));
      return make_internal_key(user, kMaxSequenceNumber, kValueKindForSeek, 0);
    }
  }
  return std::string(last);
}

}  // namespace

struct TableBuilder::Rep {
  Rep(const TableOptions& o, std::unique_ptr<ObjectWriter> w, uint64_t number,
      std::shared_ptr<const crypto::FileCipher> c)
      : options(o),
        writer(std::move(w)),
        file_number(number),
        cipher(c),
        data_block(o.block_restart_interval, o.block_restart_bytes),
        index_block(1),
        filter(o.bloom_bits_per_key),
        encoder(o.compression, o.zstd_level, std::move(c)) {}

  TableOptions options;
  std::unique_ptr<ObjectWriter> writer;
  uint64_t file_number;
  std::shared_ptr<const crypto::FileCipher> cipher;  // null for a plaintext table
  BlockBuilder data_block;
  BlockBuilder index_block;
  BloomFilterBuilder filter;
  BlockEncoder encoder;
  std::string scratch;  // the framed form of the block being written
  uint64_t offset = 0;  // bytes handed to the writer
  Status status;
  bool closed = false;  // finish() succeeded or abandon() was called
  bool pending_index_entry = false;
  BlockHandle pending_handle;
  std::string last_key;
  TableProperties props;

  void append(std::string_view bytes) {
    if (!status.ok()) return;
    status = writer->append(bytes);
    if (status.ok()) offset += bytes.size();
  }
  // Frames `raw` and writes it; *handle receives where it went.
  void write_block(std::string_view raw, bool allow_compression, BlockHandle* handle) {
    encoder.encode(raw, allow_compression, &scratch, offset);
    handle->offset = offset;
    handle->size = scratch.size() - encoder.trailer_size();
    append(scratch);
  }
  void flush_data_block() {
    if (data_block.empty() || !status.ok()) return;
    write_block(data_block.finish(), true, &pending_handle);
    data_block.reset();
    if (!status.ok()) return;
    ++props.data_blocks;
    pending_index_entry = true;
  }
  void add_index_entry(std::string_view separator) {
    std::string handle;
    encode_block_handle(pending_handle, &handle);
    index_block.add(separator, handle);
    pending_index_entry = false;
  }
};

TableBuilder::TableBuilder(const TableOptions& options, std::unique_ptr<ObjectWriter> writer,
                           uint64_t file_number, std::shared_ptr<const crypto::FileCipher> cipher)
    : rep_(std::make_unique<Rep>(options, std::move(writer), file_number, std::move(cipher))) {
  if (rep_->options.block_size == 0) rep_->options.block_size = 1;
  rep_->options.block_size = std::min(rep_->options.block_size, kMaxBlockSize / 2);
  FileHeader h;
  h.kind = FileKind::Table;
  h.file_number = file_number;
  if (rep_->cipher != nullptr) crypto::fill_header(rep_->cipher->envelope(), &h);
  std::string header;
  encode_file_header(h, &header);
  rep_->append(header);
}

TableBuilder::~TableBuilder() {
  if (!rep_->closed) rep_->writer->abort();
}

Status TableBuilder::add(std::string_view ikey, std::string_view value) {
  Rep& r = *rep_;
  if (r.closed) return Status::invalid_argument("table builder already finished");
  SKV_RETURN_IF_ERROR(r.status);
  ParsedInternalKey parsed;
  if (!parse_internal_key(ikey, &parsed)) {
    return Status::invalid_argument("table builder: malformed internal key");
  }
  if (parsed.user_key.size() > kMaxKeySize) {
    // Readers bound the properties block by two keys of this size (table_properties.h).
    return Status::invalid_argument("table builder: key larger than kMaxKeySize");
  }
  if (r.props.num_entries > 0 && compare_internal_keys(ikey, r.last_key) <= 0) {
    return Status::invalid_argument("table builder: keys added out of order");
  }
  const uint64_t entry_size = uint64_t{ikey.size()} + value.size() + kMaxBlockEntryOverhead;
  if (entry_size + 8 > kMaxBlockSize) {
    return Status::invalid_argument("table builder: entry larger than the block size limit");
  }
  if (r.pending_index_entry) r.add_index_entry(separator_between(r.last_key, ikey));
  // Never let one block outgrow what a reader accepts.
  if (!r.data_block.empty() && r.data_block.size_estimate() + entry_size > kMaxBlockSize) {
    r.flush_data_block();
    SKV_RETURN_IF_ERROR(r.status);
    r.add_index_entry(separator_between(r.last_key, ikey));
  }

  if (r.props.num_entries == 0) {
    r.props.smallest_key.assign(ikey);
    r.props.smallest_seq = parsed.sequence;
    r.props.largest_seq = parsed.sequence;
    r.filter.add_key(parsed.user_key);
  } else if (parsed.user_key != extract_user_key(r.last_key)) {
    r.filter.add_key(parsed.user_key);
  }
  r.props.smallest_seq = std::min(r.props.smallest_seq, parsed.sequence);
  r.props.largest_seq = std::max(r.props.largest_seq, parsed.sequence);
  ++r.props.num_entries;
  if (parsed.kind == ValueKind::Delete) ++r.props.num_deletions;
  r.props.raw_key_bytes += ikey.size();
  r.props.raw_value_bytes += value.size();
  r.last_key.assign(ikey);

  r.data_block.add(ikey, value);
  if (r.data_block.size_estimate() >= r.options.block_size) r.flush_data_block();
  return r.status;
}

uint64_t TableBuilder::num_entries() const { return rep_->props.num_entries; }

uint64_t TableBuilder::estimated_file_size() const {
  return rep_->offset + (rep_->data_block.empty() ? 0 : rep_->data_block.size_estimate());
}

Status TableBuilder::finish() {
  Rep& r = *rep_;
  if (r.closed) return Status::invalid_argument("table builder already finished");
  SKV_RETURN_IF_ERROR(r.status);
  if (r.props.num_entries == 0) return Status::invalid_argument("table builder: no entries");
  r.flush_data_block();
  SKV_RETURN_IF_ERROR(r.status);

  TableFooter footer;
  if (r.options.bloom_bits_per_key > 0) {
    std::string filter;
    r.filter.finish(&filter);
    r.write_block(filter, false, &footer.filter);
  }
  if (r.pending_index_entry) r.add_index_entry(successor_of(r.last_key));
  r.write_block(r.index_block.finish(), true, &footer.index);

  r.props.largest_key = r.last_key;
  std::string props;
  encode_table_properties(r.props, &props);
  r.write_block(props, false, &footer.properties);

  std::string tail;
  if (r.cipher != nullptr) {
    encode_sealed_table_footer(footer, *r.cipher, r.offset, &tail);
  } else {
    encode_table_footer(footer, &tail);
  }
  r.append(tail);
  SKV_RETURN_IF_ERROR(r.status);
  r.status = r.writer->finish();
  SKV_RETURN_IF_ERROR(r.status);
  r.closed = true;
  return Status::OK();
}

void TableBuilder::abandon() {
  if (rep_->closed) return;
  rep_->writer->abort();
  rep_->closed = true;
}

uint64_t TableBuilder::file_size() const { return rep_->offset; }

const TableProperties& TableBuilder::properties() const { return rep_->props; }

}  // namespace skv
