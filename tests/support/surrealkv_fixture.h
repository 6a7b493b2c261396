// SurrealKV 0.20/0.21 fixture writer: builds database directories (manifest, tables, WAL
// segments, value log) in the on-disk format described in docs/migration-surrealkv.md, for the
// reader's tests. It is written from the format description alone and shares no code with the
// reader, so the two check each other; no file here comes from SurrealKV itself.
//
// Header-only; a writer is used by one thread.

#ifndef SKV_TESTS_SUPPORT_SURREALKV_FIXTURE_H_
#define SKV_TESTS_SUPPORT_SURREALKV_FIXTURE_H_

#include <lz4.h>
#include <snappy.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace skv::testing::skvfix {

// Entry kinds (the low byte of the trailer).
inline constexpr uint8_t kDelete = 0, kSoftDelete = 1, kSet = 2, kReplace = 6, kSeparator = 7;

// One version as the model knows it.
struct Op {
  std::string key;
  uint64_t seq = 0;
  uint8_t kind = kSet;
  uint64_t ts = 0;
  std::string value;  // Set / Replace only
};

inline void be(std::string* d, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) d->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void le32(std::string* d, uint32_t v) {
  for (int i = 0; i < 4; ++i) d->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void varint(std::string* d, uint64_t v) {
  while (v >= 0x80) {
    d->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  d->push_back(static_cast<char>(v));
}
inline uint32_t crc(std::string_view a, std::string_view b = {}) {
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, reinterpret_cast<const Bytef*>(a.data()), static_cast<uInt>(a.size()));
  c = crc32(c, reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size()));
  return static_cast<uint32_t>(c);
}
inline std::string ikey(std::string_view user, uint64_t seq, uint8_t kind, uint64_t ts) {
  std::string k(user);
  be(&k, (seq << 8) | kind, 8);
  be(&k, ts, 8);
  return k;
}
inline std::string numbered(uint64_t id, const char* ext) {
  char b[40];
  std::snprintf(b, sizeof(b), "%020llu.%s", static_cast<unsigned long long>(id), ext);
  return b;
}
inline void write_file(const std::string& path, std::string_view bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
inline std::string inline_value(std::string_view v) {
  std::string out("\x00\x01", 2);
  out.append(v);
  return out;
}

// A value log file being built: entries are appended, pointers come back.
class VLogBuilder {
 public:
  explicit VLogBuilder(uint32_t id) : id_(id) {
    be(&bytes_, 0x564C4F47, 4);
    be(&bytes_, 1, 2);
    be(&bytes_, id, 4);
    be(&bytes_, 1700000000000ull, 8);  // created_at, ms
    be(&bytes_, 256ull << 20, 8);
    bytes_.push_back(0);  // compression
    be(&bytes_, 0, 4);
  }
  // The ValueLocation (pointer form) for `value` stored under internal key `ik`.
  std::string append(std::string_view ik, std::string_view value) {
    uint64_t at = bytes_.size();
    be(&bytes_, ik.size(), 4);
    be(&bytes_, value.size(), 4);
    bytes_.append(ik);
    bytes_.append(value);
    uint32_t c = crc(ik, value);
    be(&bytes_, c, 4);
    std::string loc("\x01\x01", 2);
    loc.push_back(1);
    be(&loc, id_, 4);
    be(&loc, at, 8);
    be(&loc, ik.size(), 4);
    be(&loc, value.size(), 4);
    be(&loc, c, 4);
    return loc;
  }
  void write(const std::string& dir) const {
    write_file(dir + "/vlog/" + numbered(id_, "vlog"), bytes_);
  }
  uint32_t id() const { return id_; }

 private:
  uint32_t id_;
  std::string bytes_;
};

// Prefix-compressed block with restarts (LevelDB layout, LE restart array).
class BlockBuilder {
 public:
  explicit BlockBuilder(int restart_interval) : interval_(restart_interval) {}
  void add(std::string_view key, std::string_view value) {
    size_t shared = 0;
    if (count_ % interval_ == 0) {
      restarts_.push_back(static_cast<uint32_t>(buf_.size()));
    } else {
      while (shared < key.size() && shared < last_.size() && key[shared] == last_[shared]) ++shared;
    }
    varint(&buf_, shared);
    varint(&buf_, key.size() - shared);
    varint(&buf_, value.size());
    buf_.append(key.substr(shared));
    buf_.append(value);
    last_.assign(key);
    ++count_;
  }
  size_t size_estimate() const { return buf_.size() + 4 * restarts_.size() + 4; }
  bool empty() const { return count_ == 0; }
  std::string finish() {
    std::string out = buf_;
    for (uint32_t r : restarts_) le32(&out, r);
    le32(&out, static_cast<uint32_t>(restarts_.size()));
    *this = BlockBuilder(interval_);
    return out;
  }

 private:
  int interval_;
  std::string buf_;
  std::vector<uint32_t> restarts_;
  std::string last_;
  int count_ = 0;
};

struct TableOptions {
  size_t block_size = 512;     // cut a data block once its estimate reaches this
  size_t partition_size = 96;  // cut an index partition once its estimate reaches this
  int restart_interval = 16;
  bool snappy = false;
  size_t vlog_threshold = SIZE_MAX;  // values longer than this go to the value log
  // Damage that still passes the CRCs, for tests of the checks behind them:
  int64_t meta_entries_delta = 0;  // added to the num_entries the TableMetadata records
  int data_compression_byte = -1;  // >= 0: written as every data block's compression byte
  bool keep_order = false;         // write the ops in the order given, unsorted
};

// Writes sstables/<id>.sst from `ops` (any order). Values above the threshold go to `vlog`.
class TableWriter {
 public:
  static void write(const std::string& dir, uint64_t id, std::vector<Op> ops, const TableOptions& o,
                    VLogBuilder* vlog) {
    if (!o.keep_order) {
      std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
        return a.key != b.key ? a.key < b.key : a.seq > b.seq;
      });
    }
    TableWriter w(o);
    BlockBuilder data(o.restart_interval);
    std::string last_key;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      std::string k = ikey(op.key, op.seq, op.kind, op.ts);
      std::string v;
      if (op.kind == kSet || op.kind == kReplace) {
        v = (vlog != nullptr && op.value.size() > o.vlog_threshold) ? vlog->append(k, op.value)
                                                                    : inline_value(op.value);
      }
      data.add(k, v);
      last_key = k;
      bool last = i + 1 == ops.size();
      if (data.size_estimate() >= o.block_size || last) {
        BlockHandleBytes h = w.emit(data.finish(), o.snappy, o.data_compression_byte);
        w.add_index(
            last ? successor(op.key, last_key) : separator(op.key, ops[i + 1].key, last_key), h,
            last);
        ++w.blocks_;
      }
    }
    std::string filter(" not a bloom filter: the reader skips it ");
    BlockHandleBytes filter_h = w.emit(filter, false);
    // Index partitions, then the top level.
    BlockBuilder top(1);
    for (auto& [last_sep, contents] : w.partitions_) {
      BlockHandleBytes h = w.emit(contents, o.snappy);
      top.add(last_sep, h);
    }
    BlockHandleBytes top_h = w.emit(top.finish(), o.snappy);
    BlockBuilder meta_index(1);
    meta_index.add(ikey("filter.leveldb.BloomFilter", 0, kSet, 0), filter_h);
    meta_index.add(ikey("meta", 0, kSet, 0), table_meta(id, ops, w));
    BlockHandleBytes meta_h = w.emit(meta_index.finish(), false);
    std::string footer;
    footer.push_back(1);
    footer.push_back(1);
    footer += meta_h;
    footer += top_h;
    footer.resize(42, '\0');
    footer.append("\x57\xfb\x80\x8b\x24\x75\x47\xdb", 8);
    w.file_ += footer;
    write_file(dir + "/sstables/" + numbered(id, "sst"), w.file_);
  }

 private:
  using BlockHandleBytes = std::string;  // varint offset, varint size
  explicit TableWriter(const TableOptions& o) : o_(o), partition_(1) {}

  BlockHandleBytes emit(const std::string& contents, bool snappy_block, int type_byte = -1) {
    std::string stored = contents;
    char type = 0;
    if (snappy_block) {
      stored.clear();
      snappy::Compress(contents.data(), contents.size(), &stored);
      type = 1;
    }
    if (type_byte >= 0) type = static_cast<char>(type_byte);
    BlockHandleBytes h;
    varint(&h, file_.size());
    varint(&h, stored.size());
    file_ += stored;
    file_.push_back(type);
    uint32_t c = crc(stored, std::string_view(&type, 1));
    le32(&file_, ((c >> 15) | (c << 17)) + 0xa282ead8u);
    return h;
  }
  void add_index(const std::string& sep, const BlockHandleBytes& h, bool last) {
    partition_.add(sep, h);
    last_sep_ = sep;
    if (partition_.size_estimate() >= o_.partition_size || last) {
      partitions_.emplace_back(last_sep_, partition_.finish());
    }
  }
  static std::string sep_key(std::string_view user) {
    return ikey(user, (uint64_t{1} << 56) - 1, kSeparator, UINT64_MAX);
  }
  // A short user key in [a, b) with the separator suffix, or the block's last key itself.
  static std::string separator(const std::string& a, const std::string& b,
                               const std::string& last_key) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    if (i < a.size() && i < b.size()) {
      auto ca = static_cast<unsigned char>(a[i]);
      if (ca < 0xff && ca + 1 < static_cast<unsigned char>(b[i])) {
        std::string s = a.substr(0, i + 1);
        s[i] = static_cast<char>(ca + 1);
        return sep_key(s);
      }
    }
    return last_key;
  }
  static std::string successor(const std::string& a, const std::string& last_key) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (static_cast<unsigned char>(a[i]) != 0xff) {
        std::string s = a.substr(0, i + 1);
        s[i] = static_cast<char>(static_cast<unsigned char>(a[i]) + 1);
        return sep_key(s);
      }
    }
    return last_key;
  }
  static std::string table_meta(uint64_t id, const std::vector<Op>& ops, const TableWriter& w) {
    uint64_t smallest = UINT64_MAX, largest = 0, dels = 0, soft = 0;
    for (const Op& op : ops) {
      smallest = std::min(smallest, op.seq);
      largest = std::max(largest, op.seq);
      if (op.kind == kDelete || op.kind == kSoftDelete) ++dels;
      if (op.kind == kSoftDelete) ++soft;
    }
    std::string p;
    be(&p, id, 8);
    p.push_back(1);  // table_format
    be(&p, ops.size() + w.o_.meta_entries_delta, 8);
    be(&p, dels, 8);
    be(&p, 1234, 8);  // data_size
    be(&p, 0, 8);     // oldest_vlog_file_id
    be(&p, w.blocks_, 8);
    be(&p, 77, 8);  // index_size
    be(&p, w.partitions_.size(), 8);
    for (int i = 0; i < 4; ++i) be(&p, 10 + i, 8);  // top-level, filter, raw key, raw value sizes
    be(&p, 0, 8);
    be(&p, 1700000000123456789ull, 8);  // created_at u128
    be(&p, ops.size(), 8);              // item_count
    be(&p, ops.size(), 8);              // key_count
    be(&p, dels, 8);                    // tombstone_count
    be(&p, soft, 8);
    be(&p, 0, 8);  // range deletions
    be(&p, 512, 4);
    be(&p, w.blocks_, 4);
    p.push_back(0);
    be(&p, smallest, 8);
    be(&p, largest, 8);
    be(&p, ops.front().ts, 8);
    be(&p, ops.back().ts, 8);
    std::string m;
    m.push_back(1);
    be(&m, smallest, 8);
    be(&m, largest, 8);
    be(&m, p.size(), 8);
    m += p;
    for (const Op* op : {&ops.front(), &ops.back()}) {
      std::string k = ikey(op->key, op->seq, op->kind, op->ts);
      m.push_back(1);
      be(&m, k.size(), 8);
      m += k;
    }
    return m;
  }

  TableOptions o_;
  std::string file_;
  BlockBuilder partition_;
  std::string last_sep_;
  std::vector<std::pair<std::string, std::string>> partitions_;  // last separator, contents
  uint64_t blocks_ = 0;
};

// One batch as the WAL stores it (values inline). `version` and the kinds are written as given.
inline std::string encode_batch(const std::vector<Op>& ops, uint8_t version = 1) {
  std::string b;
  b.push_back(static_cast<char>(version));
  varint(&b, ops.empty() ? 0 : ops.front().seq);
  varint(&b, ops.size());
  for (const Op& op : ops) {
    b.push_back(static_cast<char>(op.kind));
    varint(&b, op.key.size());
    b += op.key;
    std::string v =
        (op.kind == kDelete || op.kind == kSoftDelete) ? std::string() : inline_value(op.value);
    varint(&b, v.size());
    b += v;
    varint(&b, op.ts);
  }
  for (size_t i = 0; i < ops.size(); ++i) b.push_back(0);
  return b;
}

// A WAL segment being built: logical records split into 32 KiB blocks.
class WalBuilder {
 public:
  // compression < 0: no SetCompressionType record; otherwise one with that byte (1 = LZ4).
  explicit WalBuilder(int compression = -1) : lz4_(compression == 1) {
    if (compression >= 0) {
      physical(9, std::string(1, static_cast<char>(compression)));
      record_ends.push_back(bytes_.size());
    }
  }
  void add_record(std::string payload) {
    if (lz4_) {
      std::string c;
      le32(&c, static_cast<uint32_t>(payload.size()));
      std::string body(static_cast<size_t>(LZ4_compressBound(static_cast<int>(payload.size()))),
                       '\0');
      int n = LZ4_compress_default(payload.data(), body.data(), static_cast<int>(payload.size()),
                                   static_cast<int>(body.size()));
      c.append(body.data(), static_cast<size_t>(n));
      payload = c;
    }
    std::string_view rest = payload;
    bool first = true;
    do {
      size_t left = kBlock - bytes_.size() % kBlock;
      if (left < 7) bytes_.append(left, '\0');
      left = kBlock - bytes_.size() % kBlock - 7;
      size_t n = std::min(left, rest.size());
      bool end = n == rest.size();
      uint8_t type = first && end ? 1 : first ? 2 : end ? 4 : 3;
      physical(type, rest.substr(0, n));
      rest.remove_prefix(n);
      first = false;
    } while (!rest.empty());
    record_ends.push_back(bytes_.size());
  }
  const std::string& bytes() const { return bytes_; }
  std::vector<size_t> record_ends;  // file size after each logical record

 private:
  static constexpr size_t kBlock = 32 * 1024;
  void physical(uint8_t type, std::string_view payload) {
    char t = static_cast<char>(type);
    be(&bytes_, crc(std::string_view(&t, 1), payload), 4);
    be(&bytes_, payload.size(), 2);
    bytes_.push_back(t);
    bytes_.append(payload);
  }
  bool lz4_;
  std::string bytes_;
};

inline std::string manifest(uint64_t next_table_id, uint64_t log_number, uint64_t last_sequence,
                            const std::vector<std::vector<uint64_t>>& levels,
                            const std::vector<uint64_t>& snapshot_seqs = {}) {
  std::string m;
  be(&m, 1, 2);
  be(&m, next_table_id, 8);
  be(&m, log_number, 8);
  be(&m, last_sequence, 8);
  m.push_back(static_cast<char>(levels.size()));
  for (const auto& level : levels) {
    be(&m, level.size(), 4);
    for (uint64_t id : level) be(&m, id, 8);
  }
  be(&m, snapshot_seqs.size(), 4);
  for (uint64_t s : snapshot_seqs) {
    be(&m, 24, 4);
    be(&m, s, 8);
    be(&m, 0, 8);
    be(&m, 1700000000000000000ull + s, 8);  // created_at u128
  }
  return m;
}

}  // namespace skv::testing::skvfix

#endif  // SKV_TESTS_SUPPORT_SURREALKV_FIXTURE_H_
