// skv-test-modules: util
#include <catch2/catch.hpp>

#include <string>

#include "format/file_names.h"

using namespace skv;

TEST_CASE("file names are zero padded and parse back", "[file_names]") {
  CHECK(wal_file_name(123) == "000123.wal");
  CHECK(table_file_name(7) == "000007.sst");
  CHECK(manifest_file_name(42) == "MANIFEST-000042");
  CHECK(temp_file_name(5) == "000005.tmp");
  CHECK(vlog_file_name(88) == "000088.vlog");
  CHECK(vlog_file_name(1234567) == "1234567.vlog");
  CHECK(wal_file_name(1234567) == "1234567.wal");
  CHECK(current_file_name() == "CURRENT");

  struct Case {
    std::string name;
    FileType type;
    uint64_t number;
  };
  const Case cases[] = {
      {"000123.wal", FileType::Wal, 123},
      {"000000.wal", FileType::Wal, 0},
      {"1234567.sst", FileType::Table, 1234567},
      {"MANIFEST-000009", FileType::Manifest, 9},
      {"CURRENT", FileType::Current, 0},
      {"000077.tmp", FileType::Temp, 77},
      {"000088.vlog", FileType::ValueLog, 88},
      {"72057594037927935.wal", FileType::Wal, kMaxFileNumber - 1},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    FileType t = FileType::Unknown;
    uint64_t n = 999;
    REQUIRE(parse_file_name(c.name, &t, &n));
    CHECK(t == c.type);
    CHECK(n == c.number);
  }
  for (uint64_t n :
       {uint64_t{0}, uint64_t{1}, uint64_t{999999}, uint64_t{1000000}, kMaxFileNumber - 1}) {
    FileType t;
    uint64_t got = 0;
    REQUIRE(parse_file_name(wal_file_name(n), &t, &got));
    CHECK((t == FileType::Wal && got == n));
    REQUIRE(parse_file_name(manifest_file_name(n), &t, &got));
    CHECK((t == FileType::Manifest && got == n));
    REQUIRE(parse_file_name(vlog_file_name(n), &t, &got));
    CHECK((t == FileType::ValueLog && got == n));
  }
}

TEST_CASE("non-canonical and foreign names are unknown", "[file_names]") {
  const char* bad[] = {"",
                       "123.wal",      // too little padding
                       "0000123.wal",  // too much padding
                       "+00123.wal",
                       "00012a.wal",
                       "000123.WAL",
                       "000123.wal.bak",
                       ".wal",
                       "MANIFEST-",
                       "MANIFEST-12",
                       "MANIFEST-000012x",
                       "CURRENT.tmp",
                       "current",
                       "LOCK",
                       "000123",
                       "18446744073709551616.wal",  // overflows 64 bits
                       "18446744073709551615.wal",  // at or past kMaxFileNumber
                       "72057594037927936.wal",
                       "000123.log",
                       "123.vlog",
                       "0000123.vlog",
                       "000123.VLOG",
                       "000123.vlo",
                       ".vlog",
                       "72057594037927936.vlog"};
  for (const char* name : bad) {
    INFO(name);
    FileType t = FileType::Wal;
    uint64_t n = 5;
    CHECK_FALSE(parse_file_name(name, &t, &n));
    CHECK(t == FileType::Unknown);
  }
}
