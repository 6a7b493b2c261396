// skv-test-modules: util sstable
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "sstable/readahead_reader.h"
#include "support/string_object_reader.h"

namespace skv {
namespace {

const std::string kName = "000007.sst";

using RecordingReader = testing::StringObjectReader;

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

// Reads [offset, offset + n) through `r` and checks the bytes against `data`.
void expect_read(const ObjectReader& r, const std::string& data, uint64_t offset, size_t n) {
  std::string scratch(n, '\0');
  std::string_view got;
  REQUIRE(r.read_at(offset, n, scratch.data(), &got).ok());
  const size_t want = offset >= data.size() ? 0 : std::min<size_t>(n, data.size() - offset);
  REQUIRE(got.size() == want);
  REQUIRE(got == std::string_view(data).substr(std::min<size_t>(offset, data.size()), want));
}

}  // namespace

TEST_CASE("readahead: a sequential sweep reads windows that double up to the limit",
          "[readahead]") {
  const bool zero_copy = GENERATE(false, true);
  INFO("zero copy " << zero_copy);
  const std::string data = pattern(100000);
  RecordingReader file(kName, data, zero_copy);
  ReadaheadReader r(file, 16 * 1024);
  CHECK(r.name() == kName);
  CHECK(r.size() == data.size());

  // Blocks of 1,000 bytes, back to back.
  for (uint64_t off = 0; off < data.size(); off += 1000) expect_read(r, data, off, 1000);
  // The first read goes to the file as it is; then windows of 2, 4, 8 and 16 KiB (the limit).
  REQUIRE(file.reads.size() >= 5);
  CHECK(file.reads[0] == std::make_pair(uint64_t{0}, size_t{1000}));
  CHECK(file.reads[1] == std::make_pair(uint64_t{1000}, size_t{2000}));
  CHECK(file.reads[2] == std::make_pair(uint64_t{3000}, size_t{4000}));
  CHECK(file.reads[3] == std::make_pair(uint64_t{7000}, size_t{8000}));
  CHECK(file.reads[4] == std::make_pair(uint64_t{15000}, size_t{16000}));
  for (size_t i = 5; i < file.reads.size(); ++i) CHECK(file.reads[i].second == 16 * 1024);
  CHECK(file.reads.size() < 12);  // 100 block reads
  CHECK(r.file_reads() == file.reads.size());
}

TEST_CASE("readahead: reads elsewhere start again small, and every read is right", "[readahead]") {
  const bool zero_copy = GENERATE(false, true);
  INFO("zero copy " << zero_copy);
  const std::string data = pattern(50000);
  RecordingReader file(kName, data, zero_copy);
  ReadaheadReader r(file, 8192);

  expect_read(r, data, 0, 500);
  expect_read(r, data, 500, 500);  // a window of 1,000 bytes from 500
  CHECK(file.reads.back() == std::make_pair(uint64_t{500}, size_t{1000}));
  expect_read(r, data, 1000, 300);  // inside the window: no read
  CHECK(file.reads.size() == 2);
  expect_read(r, data, 700, 200);  // backwards but inside the window: no read
  CHECK(file.reads.size() == 2);
  // A jump, a read backwards outside the window, and a read skipping ahead each read only
  // themselves.
  expect_read(r, data, 30000, 400);
  CHECK(file.reads.back() == std::make_pair(uint64_t{30000}, size_t{400}));
  expect_read(r, data, 100, 400);
  CHECK(file.reads.back() == std::make_pair(uint64_t{100}, size_t{400}));
  expect_read(r, data, 2000, 400);
  CHECK(file.reads.back() == std::make_pair(uint64_t{2000}, size_t{400}));
  // Reads larger than the limit pass straight through.
  expect_read(r, data, 2400, 20000);
  CHECK(file.reads.back() == std::make_pair(uint64_t{2400}, size_t{20000}));
  // Near the end of the file a window comes back short, and reads past its end are short.
  expect_read(r, data, 49000, 500);
  expect_read(r, data, 49500, 600);
  expect_read(r, data, 50100, 100);
  expect_read(r, data, 60000, 10);

  // Many random reads agree with the file.
  uint64_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t off = (x >> 33) % 51000;
    const size_t n = 1 + static_cast<size_t>((x >> 17) % 3000);
    expect_read(r, data, off, n);
  }
}

TEST_CASE("readahead: a failed read is returned, holds nothing, and later reads work",
          "[readahead]") {
  const std::string data = pattern(40000);
  RecordingReader file(kName, data);
  ReadaheadReader r(file, 8192);
  expect_read(r, data, 0, 1000);
  expect_read(r, data, 1000, 1000);  // window [1000, 3000)
  expect_read(r, data, 2000, 1000);  // from the window
  CHECK(file.reads.size() == 2);
  file.fail_from = 3000;
  file.fail_to = 3100;
  std::string scratch(1000, '\0');
  std::string_view got;
  Status s = r.read_at(3000, 1000, scratch.data(), &got);
  CHECK(s.is_io_error());
  // The window was dropped: an earlier range is read again, from the file.
  const size_t before = file.reads.size();
  expect_read(r, data, 1500, 500);
  CHECK(file.reads.size() == before + 1);
  file.fail_to = 0;
  for (uint64_t off = 3000; off < 20000; off += 1000) expect_read(r, data, off, 1000);
}

}  // namespace skv
