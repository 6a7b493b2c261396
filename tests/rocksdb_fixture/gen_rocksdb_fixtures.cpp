// Writes the RocksDB databases rocksdb_reader_test reads, with Debian's RocksDB, and dumps what
// RocksDB's own iterator (read-only open) sees in each. Built only for the tests; skv's
// libraries never link RocksDB.
//
//   gen_rocksdb_fixtures <out-dir>     (the directory is replaced)
//
// Databases under <out-dir>:
//   all/      one column family per table feature (every compression Debian builds, format
//             versions 0-5, checksum types 0-4, index types 0-3, delta-encoded index values,
//             data-block hash index, partitioned filters, blob files), each with overwrites,
//             deletes, single deletes, range deletes and an unflushed batch in the WAL; an
//             ingested file; a dropped family whose WAL records remain; a ".u64ts" family.
//   recycle/  recyclable WAL records; zstdwal/: a zstd-compressed WAL.
//   merge/    a merge operand (the reader refuses it).
// Dumps: <db>.latest.tsv ("family \t hexkey \t hexvalue" of every live key, families in the
// order of families.txt) and all.versions.tsv (the u64ts family: "hexkey \t ts \t V|T \t
// hexvalue", every version newest first, as an iterator with iter_start_ts sees them).
#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace rocksdb;

namespace {

class Concat : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    out->clear();
    if (existing) {
      out->assign(existing->data(), existing->size());
      out->push_back(',');
    }
    out->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "ConcatMerge"; }
};

// Bytewise order with an 8-byte little-endian timestamp at the end of every key (newer first),
// under the name RocksDB gives its own (not exported by Debian's 7.8 headers).
class U64TsComparator : public Comparator {
 public:
  U64TsComparator() : Comparator(8) {}
  const char* Name() const override { return "leveldb.BytewiseComparator.u64ts"; }
  static uint64_t ts(const Slice& s) {
    uint64_t t = 0;
    for (int i = 7; i >= 0; --i) t = (t << 8) | static_cast<unsigned char>(s.data()[i]);
    return t;
  }
  int Compare(const Slice& a, const Slice& b) const override {
    int r = CompareWithoutTimestamp(a, true, b, true);
    if (r != 0) return r;
    return -CompareTimestamp(Slice(a.data() + a.size() - 8, 8), Slice(b.data() + b.size() - 8, 8));
  }
  int CompareWithoutTimestamp(const Slice& a, bool a_has_ts, const Slice& b,
                              bool b_has_ts) const override {
    Slice x(a.data(), a.size() - (a_has_ts ? 8 : 0));
    Slice y(b.data(), b.size() - (b_has_ts ? 8 : 0));
    return x.compare(y);
  }
  int CompareTimestamp(const Slice& a, const Slice& b) const override {
    uint64_t x = ts(a), y = ts(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

const Comparator* u64ts_comparator() {
  static U64TsComparator c;
  return &c;
}

void check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

struct CfSpec {
  const char* name;
  CompressionType comp;
  int fv;
  ChecksumType ck;
  BlockBasedTableOptions::IndexType idx;
  bool hash;
  int idx_restart;
  bool blob;
  CompressionType blob_comp;
};

const std::vector<CfSpec>& specs() {
  using I = BlockBasedTableOptions;
  static const std::vector<CfSpec> s = {
      {"default", kSnappyCompression, 5, kXXH3, I::kBinarySearch, false, 1, false, kNoCompression},
      {"zstd_part", kZSTD, 5, kCRC32c, I::kTwoLevelIndexSearch, true, 1, false, kNoCompression},
      {"lz4_fv3", kLZ4Compression, 3, kxxHash, I::kBinarySearch, false, 1, false, kNoCompression},
      {"lz4_fv4_r4", kLZ4Compression, 4, kxxHash64, I::kBinarySearch, false, 4, false,
       kNoCompression},
      {"lz4_fv1", kLZ4Compression, 1, kCRC32c, I::kBinarySearch, false, 1, false, kNoCompression},
      {"zlib_fv2", kZlibCompression, 2, kCRC32c, I::kBinarySearch, false, 1, false, kNoCompression},
      {"none_fv0", kNoCompression, 0, kCRC32c, I::kBinarySearch, false, 1, false, kNoCompression},
      {"bzip2_first", kBZip2Compression, 5, kXXH3, I::kBinarySearchWithFirstKey, false, 1, false,
       kNoCompression},
      {"lz4hc", kLZ4HCCompression, 5, kNoChecksum, I::kBinarySearch, false, 1, false,
       kNoCompression},
      {"blob_zstd", kNoCompression, 5, kXXH3, I::kBinarySearch, false, 1, true, kZSTD},
      {"blob_plain", kLZ4Compression, 5, kXXH3, I::kBinarySearch, false, 1, true, kNoCompression},
      {"zlib_fv1", kZlibCompression, 1, kxxHash, I::kBinarySearch, false, 1, false, kNoCompression},
      {"bzip2_fv1", kBZip2Compression, 1, kCRC32c, I::kBinarySearch, false, 1, false,
       kNoCompression},
      {"hash_idx", kSnappyCompression, 5, kXXH3, I::kHashSearch, false, 1, false, kNoCompression},
      {"part_filter", kZSTD, 5, kXXH3, I::kTwoLevelIndexSearch, false, 1, false, kNoCompression},
      {"zstd_dict", kZSTD, 5, kxxHash64, I::kBinarySearch, false, 1, false, kNoCompression},
  };
  return s;
}

std::string val(int i, int len) {
  std::string v;
  char c = static_cast<char>('a' + (i % 26));
  while (static_cast<int>(v.size()) < len) {
    v += "value-" + std::to_string(i);
    v += c;
  }
  v.resize(static_cast<size_t>(len));
  return v;
}

std::string hexs(const Slice& s) { return s.ToString(true); }

std::string ts_bytes(uint64_t ms, uint64_t counter) {
  uint64_t t = (ms << 16) | counter;
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>(t >> (8 * i));
  return s;
}

ColumnFamilyOptions cf_options(const CfSpec& s) {
  ColumnFamilyOptions o;
  o.compression = s.comp;
  o.disable_auto_compactions = true;
  o.write_buffer_size = 8 << 20;
  BlockBasedTableOptions t;
  t.format_version = static_cast<uint32_t>(s.fv);
  t.checksum = s.ck;
  t.index_type = s.idx;
  t.block_size = 1024;
  t.metadata_block_size = 256;
  t.index_block_restart_interval = s.idx_restart;
  std::string name = s.name;
  if (name == "hash_idx") {
    o.prefix_extractor.reset(NewCappedPrefixTransform(5));
    t.filter_policy.reset(NewBloomFilterPolicy(10));
  }
  if (name == "part_filter") {
    t.filter_policy.reset(NewBloomFilterPolicy(10));
    t.partition_filters = true;
  }
  if (name == "zstd_dict") {
    o.compression_opts.max_dict_bytes = 4096;
    o.compression_opts.zstd_max_train_bytes = 0;
  }
  if (s.hash) t.data_block_index_type = BlockBasedTableOptions::kDataBlockBinaryAndHash;
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  if (s.blob) {
    o.enable_blob_files = true;
    o.min_blob_size = 200;
    o.blob_compression_type = s.blob_comp;
  }
  return o;
}

ColumnFamilyOptions ts_options() {
  ColumnFamilyOptions o;
  o.comparator = u64ts_comparator();
  o.disable_auto_compactions = true;
  return o;
}

std::vector<ColumnFamilyDescriptor> all_descriptors() {
  std::vector<ColumnFamilyDescriptor> cfds;
  for (const auto& s : specs()) cfds.emplace_back(s.name, cf_options(s));
  cfds.emplace_back("hlc_u64ts", ts_options());
  return cfds;
}

void write_all(const std::string& path) {
  DBOptions dbo;
  dbo.create_if_missing = true;
  dbo.create_missing_column_families = true;
  auto cfds = all_descriptors();
  std::vector<ColumnFamilyHandle*> hs;
  DB* db = nullptr;
  check(DB::Open(dbo, path, cfds, &hs, &db), "open");
  WriteOptions wo;
  // A family that is dropped after writing: its WAL records must not be read.
  ColumnFamilyHandle* gone = nullptr;
  check(db->CreateColumnFamily(ColumnFamilyOptions(), "dropped", &gone), "create dropped");
  check(db->Put(wo, gone, "dropped-key", "dropped-value"), "put dropped");
  for (size_t c = 0; c < specs().size(); c++) {
    auto* h = hs[c];
    for (int i = 0; i < 300; i++) {
      char k[32];
      std::snprintf(k, sizeof k, "key%05d", i);
      check(db->Put(wo, h, k, val(i, (i % 10 == 0) ? 600 : 40)), "put");
    }
    check(db->Flush(FlushOptions(), h), "flush1");
    for (int i = 0; i < 300; i += 7) {
      char k[32];
      std::snprintf(k, sizeof k, "key%05d", i);
      check(db->Put(wo, h, k, "v2-" + std::to_string(i)), "put2");
    }
    check(db->Delete(wo, h, "key00003"), "del");
    check(db->Put(wo, h, "sd-key", "single"), "put-sd");
    check(db->SingleDelete(wo, h, "sd-key"), "sdel");
    check(db->DeleteRange(wo, h, "key00100", "key00120"), "delrange");
    check(db->Put(wo, h, "key00110", "after-range-delete"), "put-after-range");
    check(db->Flush(FlushOptions(), h), "flush2");
    WriteBatch b;
    b.Put(h, "wal-only-1", "in-the-wal");
    b.Delete(h, "key00005");
    b.SingleDelete(h, "key00006");
    b.DeleteRange(h, "key00200", "key00210");
    b.PutLogData("log-data-blob");
    b.Put(h, "wal-big", val(7, 700));
    b.Put(h, "key00205", "after-wal-range-delete");
    check(db->Write(wo, &b), "batch");
  }
  check(db->DropColumnFamily(gone), "drop");
  check(db->DestroyColumnFamilyHandle(gone), "destroy dropped");
  // An ingested file (its entries carry the sequence number given at ingestion).
  {
    std::string sst = path + "-ingest.sst";
    SstFileWriter w(EnvOptions(), Options(DBOptions(), cfds[0].options));
    check(w.Open(sst), "sst open");
    check(w.Put("ing-a", "ingested-a"), "sst put");
    check(w.Put("ing-b", "ingested-b"), "sst put");
    check(w.Put("key00001", "ingested-overwrite"), "sst put");
    check(w.Finish(), "sst finish");
    check(db->IngestExternalFile(hs[0], {sst}, IngestExternalFileOptions()), "ingest");
    std::filesystem::remove(sst);
  }
  // Compact the default family (bottommost: sequence numbers become 0), then one more write.
  check(db->CompactRange(CompactRangeOptions(), hs[0], nullptr, nullptr), "compact");
  check(db->Put(wo, hs[0], "after-compact", "x"), "put-ac");
  // The timestamped family: versions over three flushes and the WAL.
  ColumnFamilyHandle* th = hs[specs().size()];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 40; i++) {
      std::string k = "tk" + std::to_string(i % 25);
      std::string ts = ts_bytes(1700000000000ull + round * 1000 + i, static_cast<uint64_t>(i % 3));
      if (i % 11 == 5) {
        check(db->Delete(wo, th, k, ts), "ts delete");
      } else {
        check(db->Put(wo, th, k, ts, "r" + std::to_string(round) + "-" + std::to_string(i)),
              "ts put");
      }
    }
    if (round < 2) check(db->Flush(FlushOptions(), th), "ts flush");
  }
  for (auto* h : hs) check(db->DestroyColumnFamilyHandle(h), "destroy");
  check(db->Close(), "close");
  delete db;
}

void dump_all(const std::string& path, const std::string& out_prefix) {
  DBOptions dbo;
  auto cfds = all_descriptors();
  std::vector<ColumnFamilyHandle*> hs;
  DB* db = nullptr;
  check(DB::OpenForReadOnly(dbo, path, cfds, &hs, &db), "open-ro");
  std::ofstream latest(out_prefix + ".latest.tsv"), versions(out_prefix + ".versions.tsv");
  std::string max_ts(8, '\xff'), min_ts(8, '\0');
  Slice max_s(max_ts), min_s(min_ts);
  for (size_t c = 0; c < hs.size(); c++) {
    bool ts = c == specs().size();
    ReadOptions ro;
    if (ts) ro.timestamp = &max_s;
    std::unique_ptr<Iterator> it(db->NewIterator(ro, hs[c]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      latest << cfds[c].name << '\t' << hexs(it->key()) << '\t' << hexs(it->value()) << '\n';
    }
    check(it->status(), "iter");
    if (!ts) continue;
    ReadOptions all;
    all.timestamp = &max_s;
    all.iter_start_ts = &min_s;
    std::unique_ptr<Iterator> vit(db->NewIterator(all, hs[c]));
    std::string prev;
    for (vit->SeekToFirst(); vit->Valid(); vit->Next()) {
      // With iter_start_ts the key is the internal key: user key, timestamp, then the trailer.
      Slice ik = vit->key();
      if (ik.size() < 16) check(Status::Corruption("short internal key"), "versions");
      std::string ukts(ik.data(), ik.size() - 8);
      if (ukts == prev) continue;  // an older write of the same version
      prev = ukts;
      unsigned type = static_cast<unsigned char>(ik.data()[ik.size() - 8]);
      uint64_t t = 0;
      for (int i = 7; i >= 0; --i)
        t = (t << 8) | static_cast<unsigned char>(ukts[ukts.size() - 8 + static_cast<size_t>(i)]);
      uint64_t ns = (t >> 16) * 1000000ull + (t & 0xffff);
      bool tomb = type != 1;
      versions << hexs(Slice(ukts.data(), ukts.size() - 8)) << '\t' << ns << '\t'
               << (tomb ? 'T' : 'V') << '\t' << (tomb ? "" : hexs(vit->value())) << '\n';
    }
    check(vit->status(), "versions iter");
  }
  for (auto* h : hs) check(db->DestroyColumnFamilyHandle(h), "destroy");
  delete db;
}

void write_wal_variant(const std::string& mode, const std::string& path) {
  Options o;
  o.create_if_missing = true;
  if (mode == "recycle") {
    o.recycle_log_file_num = 2;
    o.wal_recovery_mode = WALRecoveryMode::kSkipAnyCorruptedRecords;
  }
  if (mode == "zstdwal") o.wal_compression = kZSTD;
  if (mode == "merge") o.merge_operator.reset(new Concat);
  DB* db = nullptr;
  check(DB::Open(o, path, &db), "open");
  if (mode == "merge") {
    check(db->Put(WriteOptions(), "base", "b"), "put");
    check(db->Merge(WriteOptions(), "mkey", "m1"), "merge");
    check(db->Flush(FlushOptions()), "flush");
    check(db->Merge(WriteOptions(), "mkey", "m2"), "merge");
  } else {
    for (int round = 0; round < 4; round++) {
      for (int i = 0; i < (round == 3 ? 50 : 200); i++) {
        std::string k = "r" + std::to_string(round) + "-k" + std::to_string(i);
        check(db->Put(
                  WriteOptions(), k,
                  std::string(static_cast<size_t>(100 + i * 3), static_cast<char>('a' + (i % 26)))),
              "put");
      }
      check(db->Delete(WriteOptions(), "r0-k5"), "del");
      if (round < 3) check(db->Flush(FlushOptions()), "flush");
    }
  }
  check(db->Close(), "close");
  delete db;
}

void dump_default(const std::string& mode, const std::string& path, const std::string& out) {
  Options o;
  if (mode == "merge") o.merge_operator.reset(new Concat);
  DB* db = nullptr;
  check(DB::OpenForReadOnly(o, path, &db), "open-ro");
  std::ofstream f(out);
  std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    f << "default\t" << hexs(it->key()) << '\t' << hexs(it->value()) << '\n';
  }
  check(it->status(), "iter");
  it.reset();
  delete db;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_rocksdb_fixtures <out-dir>\n");
    return 2;
  }
  std::string out = argv[1];
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  write_all(out + "/all");
  dump_all(out + "/all", out + "/all");
  {
    std::ofstream f(out + "/families.txt");
    for (const auto& d : all_descriptors()) f << d.name << '\n';
  }
  for (const std::string mode : {"recycle", "zstdwal", "merge"}) {
    write_wal_variant(mode, out + "/" + mode);
    dump_default(mode, out + "/" + mode, out + "/" + mode + ".latest.tsv");
  }
  std::printf("ok\n");
  return 0;
}
