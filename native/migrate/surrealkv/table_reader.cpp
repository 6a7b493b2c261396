#include "native/migrate/surrealkv/table_reader.h"

#include <cstring>

#include "util/status_macros.h"

namespace skv::migration::surrealkv {

namespace {

constexpr uint64_t kFooterSize = 50;
constexpr size_t kMagicAt = 42;
constexpr unsigned char kMagic[8] = {0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb};
constexpr uint8_t kFormatV1 = 1;
constexpr uint8_t kChecksumCrc32 = 1;
constexpr std::string_view kMetaKey = "meta";
constexpr std::string_view kFilterKey = "filter.leveldb.BloomFilter";

// Decodes the (separator key → handle) entries of an index block.
Status decode_index(const SourceFile& file, uint64_t offset, std::string_view what,
                    std::string_view contents,
                    std::vector<std::pair<std::string, BlockHandle>>* out) {
  std::vector<BlockEntry> entries;
  SKV_RETURN_IF_ERROR(decode_block(file, offset, contents, &entries));
  out->clear();
  for (const BlockEntry& e : entries) {
    BlockHandle h;
    InternalKey k;
    if (!parse_internal_key(e.key, &k)) {
      return Status::corruption(
          file.where(offset, std::string(what) + " key shorter than 16 bytes"));
    }
    if (!decode_handle(e.value, &h)) {
      return Status::corruption(file.where(offset, std::string(what) + " entry with a bad handle"));
    }
    out->emplace_back(e.key, h);
  }
  return Status::OK();
}

std::string_view user_key_of(std::string_view encoded) {
  return encoded.substr(0, encoded.size() - kInternalKeySuffix);
}

}  // namespace

Result<std::unique_ptr<TableReader>> TableReader::open(const std::string& path, uint64_t id) {
  SKV_ASSIGN_OR_RETURN(SourceFile file, SourceFile::open(path));
  std::unique_ptr<TableReader> t(new TableReader(std::move(file)));
  const SourceFile& f = t->file_;
  if (f.size() < kFooterSize) {
    return Status::corruption(f.where(
        0, "table of " + std::to_string(f.size()) + " bytes, shorter than its 50-byte footer"));
  }
  uint64_t at = f.size() - kFooterSize;
  std::string footer;
  SKV_RETURN_IF_ERROR(f.read_at(at, kFooterSize, &footer));
  if (std::memcmp(footer.data() + kMagicAt, kMagic, sizeof(kMagic)) != 0) {
    return Status::corruption(f.where(at + kMagicAt, "table footer without its magic"));
  }
  if (static_cast<uint8_t>(footer[0]) != kFormatV1) {
    return Status::not_supported(
        f.where(at, "unknown table format " + std::to_string(static_cast<uint8_t>(footer[0]))));
  }
  if (static_cast<uint8_t>(footer[1]) != kChecksumCrc32) {
    return Status::not_supported(f.where(
        at + 1, "unknown checksum type " + std::to_string(static_cast<uint8_t>(footer[1]))));
  }
  Cursor c(std::string_view(footer).substr(2, kMagicAt - 2), at + 2);
  BlockHandle meta_index, index;
  if (!c.varint(&meta_index.offset) || !c.varint(&meta_index.size) || !c.varint(&index.offset) ||
      !c.varint(&index.size)) {
    return Status::corruption(f.where(at + 2, "table footer handles malformed"));
  }
  while (!c.done()) {
    uint8_t b = 0;
    uint64_t pad_at = c.offset();
    (void)c.u8(&b);
    if (b != 0) return Status::corruption(f.where(pad_at, "table footer padding not zero"));
  }

  // Meta-index: the TableMetadata (required) and the filter (ignored).
  std::string contents;
  SKV_RETURN_IF_ERROR(read_block(f, meta_index, "meta-index block", &contents));
  t->bytes_read_ += meta_index.size + kBlockTrailer;
  std::vector<BlockEntry> entries;
  SKV_RETURN_IF_ERROR(decode_block(f, meta_index.offset, contents, &entries));
  bool have_meta = false;
  for (const BlockEntry& e : entries) {
    InternalKey k;
    if (!parse_internal_key(e.key, &k) || k.seq != 0 || k.kind != kSet || k.timestamp != 0) {
      return Status::corruption(f.where(meta_index.offset, "meta-index key malformed"));
    }
    if (k.user_key == kMetaKey && !have_meta) {
      SKV_RETURN_IF_ERROR(decode_table_meta(f, meta_index.offset, e.value, &t->meta_));
      have_meta = true;
    } else if (k.user_key == kFilterKey) {
      BlockHandle h;
      if (!decode_handle(e.value, &h)) {
        return Status::corruption(f.where(meta_index.offset, "filter handle malformed"));
      }
    } else {
      return Status::not_supported(f.where(
          meta_index.offset, "unknown meta-index entry \"" + std::string(k.user_key) + "\""));
    }
  }
  if (!have_meta) {
    return Status::corruption(f.where(meta_index.offset, "meta-index without table metadata"));
  }
  if (t->meta_.id != id) {
    return Status::corruption(f.where(meta_index.offset, "table metadata names table " +
                                                             std::to_string(t->meta_.id) +
                                                             ", expected " + std::to_string(id)));
  }

  SKV_RETURN_IF_ERROR(read_block(f, index, "top-level index", &contents));
  t->bytes_read_ += index.size + kBlockTrailer;
  SKV_RETURN_IF_ERROR(decode_index(f, index.offset, "top-level index", contents, &t->partitions_));
  return t;
}

Status TableReader::load_next_partition(bool* done) {
  if (next_partition_ == partitions_.size()) {
    *done = true;
    return Status::OK();
  }
  const auto& [last_key, h] = partitions_[next_partition_++];
  std::string contents;
  SKV_RETURN_IF_ERROR(read_block(file_, h, "index partition", &contents));
  bytes_read_ += h.size + kBlockTrailer;
  SKV_RETURN_IF_ERROR(decode_index(file_, h.offset, "index partition", contents, &data_handles_));
  // The top level names each partition by its last separator.
  if (data_handles_.back().first != last_key) {
    return Status::corruption(
        file_.where(h.offset, "index partition's last key differs from its top-level key"));
  }
  next_data_ = 0;
  ++partitions_seen_;
  return Status::OK();
}

Status TableReader::load_next_data_block(bool* done) {
  *done = false;
  while (next_data_ == data_handles_.size()) {
    SKV_RETURN_IF_ERROR(load_next_partition(done));
    if (*done) return Status::OK();
  }
  const auto& [separator, h] = data_handles_[next_data_++];
  if (h.offset != expect_data_offset_) {
    return Status::corruption(file_.where(h.offset, "data block where the previous one ends at " +
                                                        std::to_string(expect_data_offset_) +
                                                        " (blocks must follow each other)"));
  }
  SKV_RETURN_IF_ERROR(read_block(file_, h, "data block", &block_));
  bytes_read_ += h.size + kBlockTrailer;
  expect_data_offset_ = h.offset + h.size + kBlockTrailer;
  SKV_RETURN_IF_ERROR(decode_block(file_, h.offset, block_, &entries_));
  next_entry_ = 0;
  block_handle_ = h;
  block_separator_ = separator;
  ++blocks_seen_;
  return Status::OK();
}

Status TableReader::next(Entry* out, bool* done) {
  *done = false;
  if (next_entry_ == entries_.size()) {
    // The block just finished must lie below its index separator.
    if (!entries_.empty() && user_key_of(entries_.back().key) > user_key_of(block_separator_)) {
      return Status::corruption(
          file_.where(block_handle_.offset, "data block ends past its index separator"));
    }
    entries_.clear();
    next_entry_ = 0;
    SKV_RETURN_IF_ERROR(load_next_data_block(done));
    if (*done) return finish_checks();
  }
  const BlockEntry& e = entries_[next_entry_++];
  InternalKey k;
  uint64_t at = block_handle_.offset;
  if (!parse_internal_key(e.key, &k)) {
    return Status::corruption(file_.where(at, "data key shorter than 16 bytes"));
  }
  SKV_RETURN_IF_ERROR(check_entry_kind(k.kind, file_, at));
  if (entries_seen_ > 0) {
    InternalKey prev;
    (void)parse_internal_key(last_key_, &prev);
    if (k.user_key < prev.user_key || (k.user_key == prev.user_key && k.seq >= prev.seq)) {
      return Status::corruption(file_.where(at, "data keys out of order"));
    }
  } else {
    first_key_ = e.key;
  }
  bool tombstone = k.kind == kDelete || k.kind == kSoftDelete;
  if (tombstone && !e.value.empty()) {
    return Status::corruption(file_.where(at, "tombstone with a value"));
  }
  last_key_ = e.key;
  ++entries_seen_;
  if (tombstone) ++deletions_seen_;
  if (k.kind == kSoftDelete) ++soft_deletes_seen_;
  if (k.seq < min_seq_) min_seq_ = k.seq;
  if (k.seq > max_seq_) max_seq_ = k.seq;
  out->user_key.assign(k.user_key);
  out->seq = k.seq;
  out->kind = k.kind;
  out->timestamp = k.timestamp;
  out->value.assign(e.value);
  out->file = &file_;
  out->offset = at;
  return Status::OK();
}

Status TableReader::finish_checks() {
  const TableMeta& m = meta_;
  auto differ = [&](const char* what, uint64_t recorded, uint64_t seen) {
    return Status::corruption(file_.where(0, std::string("table metadata records ") +
                                                 std::to_string(recorded) + " " + what +
                                                 ", the table holds " + std::to_string(seen)));
  };
  if (m.num_entries != entries_seen_) return differ("entries", m.num_entries, entries_seen_);
  if (m.num_deletions != deletions_seen_) {
    return differ("deletions", m.num_deletions, deletions_seen_);
  }
  if (m.num_soft_deletes != soft_deletes_seen_) {
    return differ("soft deletes", m.num_soft_deletes, soft_deletes_seen_);
  }
  if (m.num_data_blocks != blocks_seen_) {
    return differ("data blocks", m.num_data_blocks, blocks_seen_);
  }
  if (m.index_partitions != partitions_seen_) {
    return differ("index partitions", m.index_partitions, partitions_seen_);
  }
  if (m.smallest_seq != min_seq_) return differ("as smallest seq", m.smallest_seq, min_seq_);
  if (m.largest_seq != max_seq_) return differ("as largest seq", m.largest_seq, max_seq_);
  if (m.has_point_keys != 1 || m.smallest_point != first_key_ || m.largest_point != last_key_) {
    return Status::corruption(
        file_.where(0, "table metadata's first and last keys differ from the table's"));
  }
  return Status::OK();
}

}  // namespace skv::migration::surrealkv
