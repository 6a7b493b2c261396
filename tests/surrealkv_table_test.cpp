// skv-test-modules: migrate util
// skv-test-wasm: off
//
// The SurrealKV table reader (native/migrate/surrealkv/table_reader.h, table_block.h,
// table_meta.h) on tables written by tests/support/surrealkv_fixture.h: entries come back in
// order with their kinds, times and value bytes, and the checks behind the CRCs (key order,
// TableMetadata, compression byte, footer) name the file and offset.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "native/migrate/surrealkv/table_reader.h"
#include "support/surrealkv_fixture.h"
#include "support/temp_dir.h"

namespace {

using skv::migration::surrealkv::Entry;
using skv::migration::surrealkv::TableReader;
using namespace skv::testing::skvfix;  // NOLINT: the fixture's vocabulary

std::vector<Op> some_ops(int n) {
  std::vector<Op> ops;
  for (int i = 0; i < n; ++i) {
    Op op;
    op.key = "key" + std::to_string(100 + i / 3);
    op.seq = static_cast<uint64_t>(1000 - i);  // versions of a key newest first
    op.kind = i % 5 == 4 ? kSoftDelete : i % 7 == 6 ? kReplace : kSet;
    op.ts = 5000 + static_cast<uint64_t>(i);
    if (op.kind != kSoftDelete) op.value = std::string(static_cast<size_t>(i % 50), 'x');
    ops.push_back(op);
  }
  return ops;
}

struct ReadAll {
  skv::Status status;
  std::vector<Entry> entries;
};

ReadAll read_all(const std::string& path, uint64_t id) {
  ReadAll r;
  auto t = TableReader::open(path, id);
  if (!t.ok()) {
    r.status = t.status();
    return r;
  }
  for (;;) {
    Entry e;
    bool done = false;
    r.status = t.value()->next(&e, &done);
    if (!r.status.ok() || done) return r;
    r.entries.push_back(e);
  }
}

void expect_error(const ReadAll& r, skv::Code code, const std::string& path,
                  const std::string& text) {
  INFO(r.status.to_string());
  CHECK(r.status.code() == code);
  CHECK(r.status.message().find(path) != std::string::npos);
  CHECK(r.status.message().find("offset") != std::string::npos);
  CHECK(r.status.message().find(text) != std::string::npos);
}

}  // namespace

TEST_CASE("surrealkv table: entries come back in order in plain and Snappy tables") {
  for (bool snappy : {false, true}) {
    skv::testing::TempDir tmp("skvt");
    TableOptions o;
    o.snappy = snappy;
    o.restart_interval = snappy ? 2 : 16;
    std::vector<Op> ops = some_ops(200);
    TableWriter::write(tmp.path, 3, ops, o, nullptr);
    std::string path = tmp.path + "/sstables/" + numbered(3, "sst");
    ReadAll r = read_all(path, 3);
    REQUIRE(r.status.ok());
    REQUIRE(r.entries.size() == ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      CHECK(r.entries[i].user_key == ops[i].key);
      CHECK(r.entries[i].seq == ops[i].seq);
      CHECK(r.entries[i].kind == ops[i].kind);
      CHECK(r.entries[i].timestamp == ops[i].ts);
      CHECK(r.entries[i].value ==
            (ops[i].kind == kSoftDelete ? std::string() : inline_value(ops[i].value)));
    }
    auto t = TableReader::open(path, 3);
    REQUIRE(t.ok());
    CHECK(t.value()->meta().num_data_blocks > 5);
    CHECK(t.value()->meta().index_partitions > 2);
    // The manifest's id must be the table's own.
    expect_error(read_all(path, 4), skv::Code::Corruption, path, "names table 3, expected 4");
  }
}

TEST_CASE("surrealkv table: checks behind the CRCs") {
  skv::testing::TempDir tmp("skvt");
  std::string path = tmp.path + "/sstables/" + numbered(3, "sst");
  TableOptions o;

  o.meta_entries_delta = 1;
  TableWriter::write(tmp.path, 3, some_ops(60), o, nullptr);
  expect_error(read_all(path, 3), skv::Code::Corruption, path,
               "records 61 entries, the table holds 60");

  o = TableOptions();
  o.data_compression_byte = 2;  // an unknown codec, under a valid CRC
  TableWriter::write(tmp.path, 3, some_ops(60), o, nullptr);
  expect_error(read_all(path, 3), skv::Code::NotSupported, path, "unknown compression byte 2");

  o = TableOptions();
  o.keep_order = true;
  std::vector<Op> ops = some_ops(60);
  std::swap(ops[10], ops[30]);
  TableWriter::write(tmp.path, 3, ops, o, nullptr);
  expect_error(read_all(path, 3), skv::Code::Corruption, path, "out of order");

  ops = some_ops(60);
  ops[11].seq = ops[10].seq;  // one (key, seq) twice
  ops[11].key = ops[10].key;
  TableWriter::write(tmp.path, 3, ops, o, nullptr);
  expect_error(read_all(path, 3), skv::Code::Corruption, path, "out of order");

  ops = some_ops(60);
  ops[5].kind = 5;  // RangeDelete, never written by 0.21
  ops[5].value.clear();
  TableWriter::write(tmp.path, 3, ops, TableOptions(), nullptr);
  expect_error(read_all(path, 3), skv::Code::NotSupported, path, "RangeDelete");
}

TEST_CASE("surrealkv table: footer bytes are checked") {
  skv::testing::TempDir tmp("skvt");
  TableWriter::write(tmp.path, 3, some_ops(40), TableOptions(), nullptr);
  std::string path = tmp.path + "/sstables/" + numbered(3, "sst");
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t footer = good.size() - 50;
  std::string bad = good;
  bad[footer + 41] = 1;  // padding before the magic
  write_file(path, bad);
  expect_error(read_all(path, 3), skv::Code::Corruption, path, "padding not zero");
  bad = good;
  bad[good.size() - 1] ^= 0x10;
  write_file(path, bad);
  expect_error(read_all(path, 3), skv::Code::Corruption, path, "magic");
  write_file(path, good.substr(0, 49));
  expect_error(read_all(path, 3), skv::Code::Corruption, path, "shorter than its 50-byte footer");
}
