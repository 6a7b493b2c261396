// skv-test-modules: migrate util
// skv-test-wasm: off
//
// The SurrealKV manifest decoder (native/migrate/surrealkv/manifest.h): with no checksum, every
// field is checked, and each failure names the file and offset.

#include <catch2/catch.hpp>

#include <string>

#include "native/migrate/source_file.h"
#include "native/migrate/surrealkv/manifest.h"
#include "support/surrealkv_fixture.h"
#include "support/temp_dir.h"

namespace {

using skv::migration::SourceFile;
using skv::migration::surrealkv::Manifest;
using skv::migration::surrealkv::read_manifest;
using skv::testing::skvfix::be;
using skv::testing::skvfix::manifest;
using skv::testing::skvfix::write_file;

skv::Result<Manifest> decode(const skv::testing::TempDir& tmp, const std::string& bytes) {
  std::string path = tmp.sub("m.manifest");
  write_file(path, bytes);
  auto f = SourceFile::open(path);
  REQUIRE(f.ok());
  return read_manifest(f.value());
}

void expect_corrupt(const skv::testing::TempDir& tmp, const std::string& bytes,
                    const std::string& text) {
  auto m = decode(tmp, bytes);
  REQUIRE_FALSE(m.ok());
  INFO(m.status().to_string());
  CHECK(m.status().is_corruption());
  CHECK(m.status().message().find(tmp.sub("m.manifest")) != std::string::npos);
  CHECK(m.status().message().find("offset") != std::string::npos);
  CHECK(m.status().message().find(text) != std::string::npos);
}

}  // namespace

TEST_CASE("surrealkv manifest decodes its fields") {
  skv::testing::TempDir tmp("skvm");
  auto m = decode(tmp, manifest(9, 4, 77, {{8, 7}, {}, {3, 5}}, {70, 71}));
  REQUIRE(m.ok());
  CHECK(m.value().next_table_id == 9);
  CHECK(m.value().log_number == 4);
  CHECK(m.value().last_sequence == 77);
  CHECK(m.value().levels == std::vector<std::vector<uint64_t>>{{8, 7}, {}, {3, 5}});
}

TEST_CASE("surrealkv manifest refuses every inconsistent field") {
  skv::testing::TempDir tmp("skvm");
  std::string good = manifest(9, 4, 77, {{8, 7}, {3}}, {70});
  REQUIRE(decode(tmp, good).ok());

  std::string v2 = good;
  v2[1] = 2;
  auto m = decode(tmp, v2);
  CHECK(m.status().code() == skv::Code::NotSupported);

  for (size_t len = 0; len < good.size(); ++len) {
    INFO("cut to " << len);
    auto cut = decode(tmp, good.substr(0, len));
    CHECK(cut.status().is_corruption());
  }
  expect_corrupt(tmp, good + std::string(1, '\0'), "trailing bytes");
  expect_corrupt(tmp, manifest(9, 4, 77, {}), "no levels");
  expect_corrupt(tmp, manifest(9, 4, 77, {{8, 8}}), "listed twice");
  expect_corrupt(tmp, manifest(9, 4, 77, {{9}}), "outside 1..next_table_id");
  expect_corrupt(tmp, manifest(9, 4, 77, {{0}}), "outside 1..next_table_id");

  // A table count larger than the bytes that follow: refused before anything is allocated.
  std::string big;
  be(&big, 1, 2);
  be(&big, 9, 8);
  be(&big, 4, 8);
  be(&big, 77, 8);
  big.push_back(1);
  be(&big, 0xffffffffu, 4);
  expect_corrupt(tmp, big, "table count 4294967295");

  // A snapshot record whose length is not 24.
  std::string snap = manifest(9, 4, 77, {{8}}, {70});
  size_t len_at = snap.size() - 28;
  snap[len_at + 3] = 25;
  expect_corrupt(tmp, snap, "snapshot record of 25 bytes");
}
