// Writes the seed corpora of the fuzz targets: small valid inputs made by skv's own writers, so
// the fuzzers start from real formats. Deterministic (no clock, no randomness); run once and
// commit the output:
//
//   skv_fuzz_make_corpus tests/fuzz/corpus
//
// writes <dir>/wal_reader/, <dir>/block/, <dir>/table/, <dir>/manifest/, <dir>/vlog/ and
// <dir>/encrypted/ (sealed files, sealed_files.h) (replacing files of the same names).

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/file_header.h"
#include "format/file_names.h"
#include "format/internal_key.h"
#include "fuzz_support.h"
#include "platform/memory/memory_platform.h"
#include "sealed_files.h"
#include "sstable/block_builder.h"
#include "sstable/block_format.h"
#include "sstable/table_builder.h"
#include "sstable/table_properties.h"
#include "version/table_cache.h"
#include "version/version_edit.h"
#include "version/version_set.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_writer.h"
#include "wal/log_writer.h"
#include "wal/write_batch.h"

using namespace skv;

namespace {

std::filesystem::path g_root;
size_t g_files = 0;
size_t g_bytes = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "make_corpus: %s\n", what.c_str());
  std::exit(1);
}

void check(const Status& s, const std::string& what) {
  if (!s.ok()) fail(what + ": " + s.to_string());
}

void write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::filesystem::path dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("cannot write " + (dir / name).string());
  ++g_files;
  g_bytes += bytes.size();
}

std::string key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%05d", i);
  return buf;
}

// --- WAL -----------------------------------------------------------------------------------

std::string batch(SequenceNumber seq, int first, int n, bool with_delete) {
  WriteBatch b;
  b.set_sequence(seq);
  for (int i = 0; i < n; ++i) {
    if (with_delete && i % 3 == 2) {
      b.del(key(first + i), 1000 + static_cast<uint64_t>(i));
    } else {
      b.put(key(first + i), std::string(static_cast<size_t>(i % 7), static_cast<char>('a' + i)),
            1000 + static_cast<uint64_t>(i));
    }
  }
  return b.encoded();
}

std::string wal(const std::vector<std::string>& records) {
  std::string bytes;
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 7;
  log::Writer w(std::make_unique<fuzz::StringLogFile>("000007.wal", &bytes), h);
  for (const std::string& r : records) check(w.add_record(r), "wal record");
  check(w.close(), "wal close");
  return bytes;
}

void make_wal() {
  // The writer writes the header with the first record; a segment of no records is the header.
  std::string header;
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 7;
  encode_file_header(h, &header);
  write("wal_reader", "header-only", header);
  write("wal_reader", "one-batch", wal({batch(1, 0, 3, false)}));
  write("wal_reader", "three-batches",
        wal({batch(1, 0, 2, false), batch(3, 10, 5, true), batch(8, 20, 1, true)}));
  std::string big = wal({batch(100, 0, 40, true), batch(140, 50, 2, false)});
  write("wal_reader", "forty-entries", big);
  // A torn tail: the last record cut short, and a zeroed tail.
  std::string torn = wal({batch(1, 0, 2, false), batch(3, 5, 4, false)});
  torn.resize(torn.size() - 7);
  write("wal_reader", "torn-tail", torn);
  std::string zeroed = wal({batch(1, 0, 2, false)});
  zeroed.append(40, '\0');
  write("wal_reader", "zero-tail", zeroed);
  // A bare batch payload (the target also decodes the whole input as one).
  write("wal_reader", "bare-batch", batch(42, 0, 4, true));
}

// --- blocks ----------------------------------------------------------------------------------

std::string block_contents(int n, int restart_interval, int value_size) {
  BlockBuilder b(restart_interval);
  for (int i = 0; i < n; ++i) {
    b.add(make_internal_key(key(i), static_cast<SequenceNumber>(100 - i),
                            i % 4 == 3 ? ValueKind::Delete : ValueKind::Value, 7),
          std::string(static_cast<size_t>(value_size), static_cast<char>('v' + i % 3)));
  }
  return std::string(b.finish());
}

std::string with_mode(char mode, const std::string& rest) { return std::string(1, mode) + rest; }

void make_block() {
  write("block", "contents-interval-1", with_mode(0, block_contents(6, 1, 3)));
  write("block", "contents-interval-4", with_mode(0, block_contents(17, 4, 5)));
  write("block", "contents-interval-16", with_mode(0, block_contents(20, 16, 0)));
  write("block", "contents-empty", with_mode(0, block_contents(0, 16, 0)));
  BlockEncoder none(Compression::None, 1);
  BlockEncoder zstd(Compression::Zstd, 3);
  std::string stored;
  none.encode(block_contents(8, 2, 4), true, &stored);
  write("block", "stored-none", with_mode(1, stored));
  write("block", "stored-none-copy", with_mode(2, stored));
  zstd.encode(block_contents(24, 8, 24), true, &stored);
  if (static_cast<uint8_t>(stored[stored.size() - kBlockTrailerSize]) != kBlockTypeZstd) {
    fail("the zstd seed block did not compress");
  }
  write("block", "stored-zstd", with_mode(1, stored));
  write("block", "stored-zstd-views", with_mode(0x12, stored));

  TableFooter f;
  f.index = {300, 40};
  f.filter = {200, 90};
  f.properties = {345, 60};
  std::string footer;
  encode_table_footer(f, &footer);
  write("block", "footer", with_mode(3, footer));
  TableProperties p;
  p.num_entries = 10;
  p.num_deletions = 2;
  p.raw_key_bytes = 240;
  p.raw_value_bytes = 500;
  p.data_blocks = 3;
  p.smallest_key = make_internal_key("apple", 9, ValueKind::Value, 1);
  p.largest_key = make_internal_key("zebra", 3, ValueKind::Delete, 2);
  p.smallest_seq = 3;
  p.largest_seq = 9;
  std::string props;
  encode_table_properties(p, &props);
  write("block", "properties", with_mode(3, props));
  std::string handle;
  encode_block_handle({123456, 789}, &handle);
  write("block", "handle", with_mode(3, handle));
}

// --- tables ----------------------------------------------------------------------------------

std::string table(const TableOptions& o, uint64_t number, int keys, int versions) {
  std::string bytes;
  TableBuilder b(o, std::make_unique<fuzz::StringObjectWriter>(&bytes), number);
  for (int i = 0; i < keys; ++i) {
    for (int v = 0; v < versions; ++v) {
      const SequenceNumber seq = static_cast<SequenceNumber>(1000 - v * 10 - i);
      const ValueKind kind = (i + v) % 5 == 4 ? ValueKind::Delete : ValueKind::Value;
      const std::string value =
          kind == ValueKind::Delete
              ? std::string()
              : std::string(static_cast<size_t>(4 + (i * 7 + v) % 20), static_cast<char>('A' + v));
      check(b.add(make_internal_key(key(i * 3), seq, kind, 5000 + static_cast<uint64_t>(v)), value),
            "table add");
    }
  }
  check(b.finish(), "table finish");
  return bytes;
}

void make_table() {
  TableOptions small;
  small.block_size = 256;
  small.block_restart_interval = 4;
  small.compression = Compression::None;
  small.bloom_bits_per_key = 10;
  write("table", "plain-bloom", table(small, 42, 30, 2));
  TableOptions nofilter = small;
  nofilter.bloom_bits_per_key = 0;
  nofilter.block_restart_interval = 1;
  write("table", "plain-no-filter", table(nofilter, 43, 12, 1));
  TableOptions zstd = small;
  zstd.compression = Compression::Zstd;
  zstd.block_size = 1024;
  zstd.block_restart_interval = 16;
  write("table", "zstd-bloom", table(zstd, 44, 60, 3));
  TableOptions one = small;
  one.block_size = 4096;
  write("table", "single-entry", table(one, 45, 1, 1));
}

// --- manifests -------------------------------------------------------------------------------

FileMetaData meta(uint64_t number, const std::string& lo, const std::string& hi, SequenceNumber s1,
                  SequenceNumber s2) {
  FileMetaData m;
  m.number = number;
  m.file_size = 1000 + number;
  m.smallest = make_internal_key(lo, s2, ValueKind::Value, 11);
  m.largest = make_internal_key(hi, s1, ValueKind::Delete, 12);
  m.smallest_seq = s1;
  m.largest_seq = s2;
  m.num_entries = 5 * number;
  return m;
}

void make_manifest() {
  MemoryPlatform platform;
  auto opened = platform.open_storage("corpus", StorageOptions{});
  check(opened.status(), "open storage");
  std::unique_ptr<Storage> storage = std::move(*opened);
  Options options;
  options.level_count = 7;
  auto tables = std::make_shared<TableCache>(storage.get(), nullptr, 4);
  VersionSet vs(storage.get(), options, tables);
  check(vs.create_new(), "create_new");
  const std::string name = manifest_file_name(vs.manifest_file_number());
  auto save = [&](const std::string& seed) {
    Result<std::string> bytes = platform.read_file("corpus", name);
    check(bytes.status(), "read manifest");
    write("manifest", seed, *bytes);
  };
  save("fresh");

  VersionEdit e1;
  const uint64_t t1 = *vs.new_file_number();
  const uint64_t t2 = *vs.new_file_number();
  e1.add_file(0, meta(t1, "apple", "mango", 1, 40));
  e1.add_file(0, meta(t2, "banana", "zebra", 41, 90));
  e1.set_log_number(*vs.new_file_number());
  vs.set_last_sequence(90);
  check(vs.log_and_apply(&e1), "edit 1");
  VersionEdit e2;
  const uint64_t t3 = *vs.new_file_number();
  const uint64_t t4 = *vs.new_file_number();
  e2.delete_file(0, t1);
  e2.add_file(1, meta(t3, "apple", "fig", 1, 40));
  e2.add_file(1, meta(t4, "grape", "mango", 5, 38));
  e2.set_compact_pointer(1, make_internal_key("fig", 40, ValueKind::Value, 0));
  check(vs.log_and_apply(&e2), "edit 2");
  save("flush-and-compaction");

  VersionEdit e3;
  e3.delete_file(1, t3);
  e3.add_file(2, meta(*vs.new_file_number(), "apple", "fig", 1, 40));
  vs.set_last_sequence(120);
  check(vs.log_and_apply(&e3), "edit 3");
  save("three-edits");

  // A flush that separated values, then a compaction that moved the pointers and dropped some.
  VersionEdit e4;
  const uint64_t v1 = *vs.new_file_number();
  const uint64_t t5 = *vs.new_file_number();
  FileMetaData with_pointers = meta(t5, "cherry", "plum", 121, 150);
  with_pointers.vlog_refs = {{v1, 4000}};
  e4.add_file(0, with_pointers);
  e4.add_vlog_file(VlogFileMeta{v1, 64 + 5000, 10});
  vs.set_last_sequence(150);
  check(vs.log_and_apply(&e4), "edit 4");
  VersionEdit e5;
  const uint64_t t6 = *vs.new_file_number();
  FileMetaData moved = meta(t6, "cherry", "plum", 121, 150);
  moved.vlog_refs = {{v1, 2500}};
  e5.delete_file(0, t5);
  e5.add_file(3, moved);
  check(vs.log_and_apply(&e5), "edit 5");
  save("value-logs");

  // A bare edit payload (the target also decodes the whole input as one edit).
  VersionEdit bare;
  bare.set_log_number(5);
  bare.set_next_file_number(12);
  bare.set_last_sequence(77);
  bare.set_compact_pointer(2, make_internal_key("kiwi", 3, ValueKind::Value, 0));
  bare.delete_file(1, 4);
  FileMetaData bare_file = meta(9, "kiwi", "lemon", 2, 70);
  bare_file.vlog_refs = {{10, 300}, {11, 13}};
  bare.add_file(2, bare_file);
  bare.add_vlog_file(VlogFileMeta{10, 64 + 600, 4});
  bare.add_vlog_file(VlogFileMeta{11, 64 + 13, 1});
  bare.delete_vlog_file(8);
  std::string payload;
  bare.encode_to(&payload);
  write("manifest", "bare-edit", payload);
}

// --- value logs ------------------------------------------------------------------------------

std::string vlog(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string bytes;
  vlog::VlogWriter w(std::make_unique<fuzz::StringLogFile>(vlog_file_name(7), &bytes), 7);
  for (const auto& [k, v] : entries) check(w.add(k, v).status(), "vlog entry");
  check(w.close(), "vlog close");
  return bytes;
}

void make_vlog() {
  std::string header;
  FileHeader h;
  h.kind = FileKind::ValueLog;
  h.file_number = 7;
  encode_file_header(h, &header);
  write("vlog", "header-only", header);
  write("vlog", "one-entry", vlog({{"key00001", std::string(40, 'v')}}));
  std::vector<std::pair<std::string, std::string>> several;
  for (int i = 0; i < 6; ++i) {
    several.push_back(
        {key(i), std::string(static_cast<size_t>(i * 37), static_cast<char>('a' + i))});
  }
  write("vlog", "several-entries", vlog(several));  // the first value is empty
  write("vlog", "sector-crossing", vlog({{"k", std::string(700, 'x')}, {"k2", "tail"}}));
  std::string torn = vlog(several);
  torn.resize(torn.size() - 9);
  write("vlog", "torn-tail", torn);
  std::string zeroed = vlog({{"k", "value"}});
  zeroed.append(40, '\0');
  write("vlog", "zero-tail", zeroed);
  // A bare pointer (the target also decodes the whole input as one).
  std::string pointer;
  vlog::encode_value_pointer({7, 64, 1000}, &pointer);
  write("vlog", "bare-pointer", pointer);
}

// --- sealed files (encrypted_fuzz) -------------------------------------------------------------

std::string sealed_log(FileKind kind, uint64_t number, size_t records) {
  std::string bytes;
  FileHeader h;
  h.kind = kind;
  h.file_number = number;
  log::Writer w(std::make_unique<fuzz::StringLogFile>("sealed", &bytes), h,
                fuzz::sealed_cipher(kind, number));
  const std::vector<std::string> all = fuzz::sealed_log_records(kind);
  for (size_t i = 0; i < records && i < all.size(); ++i) check(w.add_record(all[i]), "sealed log");
  check(w.close(), "sealed log close");
  return bytes;
}

std::string sealed_table(const TableOptions& o, size_t entries) {
  std::string bytes;
  TableBuilder b(o, std::make_unique<fuzz::StringObjectWriter>(&bytes), fuzz::kSealedTableNumber,
                 fuzz::sealed_cipher(FileKind::Table, fuzz::kSealedTableNumber));
  const auto all = fuzz::sealed_table_entries();
  for (size_t i = 0; i < entries && i < all.size(); ++i) {
    check(b.add(all[i].first, all[i].second), "sealed table add");
  }
  check(b.finish(), "sealed table finish");
  return bytes;
}

void make_encrypted() {
  write("encrypted", "wal", sealed_log(FileKind::Wal, fuzz::kSealedWalNumber, 12));
  write("encrypted", "wal-one-record", sealed_log(FileKind::Wal, fuzz::kSealedWalNumber, 1));
  std::string torn = sealed_log(FileKind::Wal, fuzz::kSealedWalNumber, 4);
  torn.resize(torn.size() - 9);
  write("encrypted", "wal-torn-tail", torn);
  write("encrypted", "manifest", sealed_log(FileKind::Manifest, fuzz::kSealedManifestNumber, 5));
  std::string vlog_bytes;
  {
    vlog::VlogWriter w(std::make_unique<fuzz::StringLogFile>("sealed", &vlog_bytes),
                       fuzz::kSealedVlogNumber,
                       fuzz::sealed_cipher(FileKind::ValueLog, fuzz::kSealedVlogNumber));
    for (const auto& [k, v] : fuzz::sealed_vlog_entries()) {
      check(w.add(k, v).status(), "sealed vlog entry");
    }
    check(w.close(), "sealed vlog close");
  }
  write("encrypted", "vlog", vlog_bytes);
  TableOptions small;
  small.block_size = 256;
  small.compression = Compression::None;
  write("encrypted", "table", sealed_table(small, 80));
  TableOptions zstd = small;
  zstd.compression = Compression::Zstd;
  write("encrypted", "table-zstd", sealed_table(zstd, 40));
  write("encrypted", "table-one-entry", sealed_table(small, 1));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  make_wal();
  make_block();
  make_table();
  make_manifest();
  make_vlog();
  make_encrypted();
  std::printf("make_corpus: wrote %zu files, %zu bytes under %s\n", g_files, g_bytes, argv[1]);
  return 0;
}
