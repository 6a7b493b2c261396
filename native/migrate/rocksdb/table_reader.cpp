#include "native/migrate/rocksdb/table_reader.h"

#include "native/migrate/rocksdb/decode.h"

namespace skv::migration::rocksdb {

namespace {
constexpr uint64_t kLegacyMagic = 0xdb4775248b80fb57ull;
constexpr uint64_t kBlockBasedMagic = 0x88e241b785f4cff7ull;
constexpr uint64_t kPlainMagic = 0x8242229663bf9564ull;
constexpr uint64_t kLegacyPlainMagic = 0x4f3418eb7a8f13b8ull;
constexpr uint64_t kCuckooMagic = 0x926789d0c5f17873ull;
}  // namespace

bool parse_internal_key(std::string_view ikey, ParsedEntry* out) {
  if (ikey.size() < 8) return false;
  uint64_t trailer = load64(ikey.data() + ikey.size() - 8);
  out->user_key = ikey.substr(0, ikey.size() - 8);
  out->seq = trailer >> 8;
  out->type = static_cast<uint8_t>(trailer & 0xff);
  return true;
}

Result<std::unique_ptr<TableReader>> TableReader::open(SourceFile file, uint64_t ingest_seqno) {
  std::unique_ptr<TableReader> t(new TableReader(std::move(file)));
  if (Status s = t->load(ingest_seqno); !s.ok()) return s;
  return t;
}

Status TableReader::load(uint64_t ingest_seqno) {
  const SourceFile& f = file_;
  blocks_.file = &file_;
  if (f.size() < 48) return Status::corruption(f.where(0, "table shorter than a footer"));
  std::string tail;
  if (Status s = f.read_at(f.size() - 8, 8, &tail); !s.ok()) return s;
  uint64_t magic = load64(tail.data());
  if (magic == kPlainMagic || magic == kLegacyPlainMagic) {
    return Status::not_supported(f.where(f.size() - 8, "PlainTable files are not read"));
  }
  if (magic == kCuckooMagic) {
    return Status::not_supported(f.where(f.size() - 8, "CuckooTable files are not read"));
  }
  if (magic != kLegacyMagic && magic != kBlockBasedMagic) {
    return Status::corruption(f.where(f.size() - 8, "unknown table magic"));
  }
  BlockHandle metaindex, index;
  bool have_index = true;
  uint64_t footer_off;
  std::string footer;
  if (magic == kLegacyMagic) {
    footer_off = f.size() - 48;
    if (Status s = f.read_at(footer_off, 48, &footer); !s.ok()) return s;
    std::string_view in(footer.data(), 40);
    if (!get_block_handle(&in, &metaindex) || !get_block_handle(&in, &index)) {
      return Status::corruption(f.where(footer_off, "footer handles"));
    }
    blocks_.checksum_type = 1;
    blocks_.format_version = 0;
  } else {
    if (f.size() < 53) return Status::corruption(f.where(0, "table shorter than a footer"));
    footer_off = f.size() - 53;
    if (Status s = f.read_at(footer_off, 53, &footer); !s.ok()) return s;
    blocks_.checksum_type = static_cast<unsigned char>(footer[0]);
    blocks_.format_version = load32(footer.data() + 41);
    if (blocks_.checksum_type > 4) {
      return Status::not_supported(
          f.where(footer_off, "checksum type " + std::to_string(blocks_.checksum_type)));
    }
    if (blocks_.format_version == 0 || blocks_.format_version > 7) {
      return Status::not_supported(
          f.where(footer_off, "table format_version " + std::to_string(blocks_.format_version)));
    }
    if (blocks_.format_version >= 6) {
      if (footer.compare(1, 4, std::string("\x3e\x00\x7a\x00", 4)) != 0) {
        return Status::corruption(f.where(footer_off, "footer marker"));
      }
      if (load64(footer.data() + 33) != 0) {
        return Status::corruption(f.where(footer_off, "footer padding"));
      }
      uint32_t stored = load32(footer.data() + 5);
      blocks_.base_context_checksum = load32(footer.data() + 9);
      uint32_t mi_size = load32(footer.data() + 13);
      std::string copy = footer;
      std::memset(copy.data() + 5, 0, 4);
      uint32_t want = 0;
      if (blocks_.checksum_type != 0) {
        blocks_.checksum(copy.data(), copy.size(), &want);
        if (blocks_.base_context_checksum != 0) {
          want += blocks_.base_context_checksum ^
                  (static_cast<uint32_t>(footer_off) + static_cast<uint32_t>(footer_off >> 32));
        }
        if (want != stored) return Status::corruption(f.where(footer_off, "footer checksum"));
      }
      if (mi_size + 5ull > footer_off)
        return Status::corruption(f.where(footer_off, "metaindex size"));
      metaindex.offset = footer_off - 5 - mi_size;
      metaindex.size = mi_size;
      have_index = false;
    } else {
      std::string_view in(footer.data() + 1, 40);
      if (!get_block_handle(&in, &metaindex) || !get_block_handle(&in, &index)) {
        return Status::corruption(f.where(footer_off, "footer handles"));
      }
    }
  }
  // Metaindex.
  std::string mi;
  if (Status s = blocks_.read(metaindex, &mi); !s.ok()) return s;
  BlockHandle props_h, range_h, dict_h;
  bool have_props = false, have_range = false, have_dict = false;
  {
    BlockIter it(&f, metaindex.offset, mi);
    while (it.next()) {
      std::string_view v = it.value();
      BlockHandle h;
      if (!get_block_handle(&v, &h))
        return Status::corruption(f.where(metaindex.offset, "metaindex handle"));
      if (it.key() == "rocksdb.properties" || it.key() == "rocksdb.stats") {
        props_h = h;
        have_props = true;
      } else if (it.key() == "rocksdb.range_del") {
        range_h = h;
        have_range = true;
      } else if (it.key() == "rocksdb.compression_dict") {
        dict_h = h;
        have_dict = true;
      } else if (it.key() == "rocksdb.index") {
        index = h;
        have_index = true;
      }
    }
    if (!it.status().ok()) return it.status();
  }
  if (!have_index) return Status::corruption(f.where(metaindex.offset, "no index handle"));
  if (have_props) {
    std::string pb;
    if (Status s = blocks_.read(props_h, &pb); !s.ok()) return s;
    BlockIter it(&f, props_h.offset, pb);
    while (it.next()) {
      std::string_view k = it.key(), v = it.value();
      uint64_t n = 0;
      if (k == "rocksdb.comparator") {
        props_.comparator = std::string(v);
      } else if (k == "rocksdb.merge.operator") {
        props_.merge_operator = std::string(v);
      } else if (k == "rocksdb.column.family.name") {
        props_.column_family_name = std::string(v);
      } else if (k == "rocksdb.block.based.table.index.type") {
        if (v.size() != 4)
          return Status::corruption(f.where(props_h.offset, "index type property"));
        props_.index_type = load32(v.data());
      } else if (k == "rocksdb.index.key.is.user.key") {
        if (!get_varint64(&v, &n)) return Status::corruption(f.where(props_h.offset, "property"));
        props_.index_key_is_user_key = n != 0;
      } else if (k == "rocksdb.index.value.is.delta.encoded") {
        if (!get_varint64(&v, &n)) return Status::corruption(f.where(props_h.offset, "property"));
        props_.index_value_is_delta_encoded = n != 0;
      } else if (k == "rocksdb.external_sst_file.version") {
        props_.external = true;
      } else if (k == "rocksdb.external_sst_file.global_seqno") {
        if (!get_varint64(&v, &n)) return Status::corruption(f.where(props_h.offset, "property"));
        props_.global_seqno = n;
      }
    }
    if (!it.status().ok()) return it.status();
  }
  if (props_.index_type > 3) {
    return Status::not_supported(
        f.where(index.offset, "index type " + std::to_string(props_.index_type)));
  }
  if (props_.external)
    forced_seqno_ = props_.global_seqno != 0 ? props_.global_seqno : ingest_seqno;
  if (have_dict) {
    if (Status s = blocks_.read(dict_h, &blocks_.dictionary); !s.ok()) return s;
  }
  if (have_range) {
    std::string rb;
    if (Status s = blocks_.read(range_h, &rb); !s.ok()) return s;
    BlockIter it(&f, range_h.offset, rb);
    while (it.next()) {
      ParsedEntry e;
      if (!parse_internal_key(it.key(), &e) || e.type != 0xF) {
        return Status::corruption(f.where(range_h.offset, "range deletion key"));
      }
      tombstones_.push_back(RangeTombstone{std::string(e.user_key), std::string(it.value()),
                                           forced_seqno_ ? forced_seqno_ : e.seq});
    }
    if (!it.status().ok()) return it.status();
  }
  return load_index(index, props_.index_type == 2);
}

Status TableReader::load_index(const BlockHandle& h, bool top_level) {
  std::string ib;
  if (Status s = blocks_.read(h, &ib); !s.ok()) return s;
  // Both levels of a partitioned index share the table's value encoding.
  bool delta = props_.index_value_is_delta_encoded;
  BlockIter it(&file_, h.offset, ib, delta, props_.index_type == 3 && !top_level);
  while (it.next()) {
    BlockHandle bh;
    if (delta) {
      bh = it.handle();
    } else {
      std::string_view v = it.value();
      if (!get_block_handle(&v, &bh))
        return Status::corruption(file_.where(h.offset, "index handle"));
    }
    if (bh.offset + bh.size + 5 > file_.size()) {
      return Status::corruption(file_.where(h.offset, "index entry points past the end"));
    }
    if (top_level) {
      if (Status s = load_index(bh, false); !s.ok()) return s;
    } else {
      data_blocks_.push_back(bh);
    }
  }
  return it.status();
}

bool TableIter::next() {
  for (;;) {
    if (!status_.ok()) return false;
    if (iter_) {
      if (iter_->next()) {
        if (!parse_internal_key(iter_->key(), &entry_)) {
          status_ = Status::corruption(table_->file().where(iter_offset_, "internal key"));
          return false;
        }
        if (table_->forced_seqno() != 0) entry_.seq = table_->forced_seqno();
        entry_.value = iter_->value();
        return true;
      }
      if (!iter_->status().ok()) {
        status_ = iter_->status();
        return false;
      }
      iter_.reset();
    }
    if (block_index_ >= table_->data_blocks().size()) return false;
    const BlockHandle& h = table_->data_blocks()[block_index_++];
    status_ = table_->blocks().read(h, &block_);
    if (!status_.ok()) return false;
    bytes_read_ += h.size + 5;
    iter_offset_ = h.offset;
    iter_ = std::make_unique<BlockIter>(&table_->file(), h.offset, block_);
  }
}

}  // namespace skv::migration::rocksdb
