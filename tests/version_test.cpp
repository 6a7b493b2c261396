// skv-test-modules: util
// The version constants agree with each other, and every file header carries the format version.

#include <catch2/catch.hpp>

#include <string>

#include "format/file_header.h"
#include "skv/version.h"

using namespace skv;

TEST_CASE("the version string spells the version numbers", "[version]") {
  CHECK(std::string(kVersion) == std::to_string(kVersionMajor) + "." +
                                     std::to_string(kVersionMinor) + "." +
                                     std::to_string(kVersionPatch));
}

TEST_CASE("file headers are written with the format version and newer ones are refused",
          "[version]") {
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = 7;
  CHECK(h.format_version == kFormatVersion);
  std::string bytes;
  encode_file_header(h, &bytes);
  Result<FileHeader> back = decode_file_header(bytes, FileKind::Wal, "000007.wal");
  REQUIRE(back.ok());
  CHECK(back->format_version == kFormatVersion);
  h.format_version = kFormatVersion + 1;
  bytes.clear();
  encode_file_header(h, &bytes);
  CHECK(decode_file_header(bytes, FileKind::Wal, "000007.wal").status().code() == Code::Corruption);
  // Older development formats are refused by name.
  h.format_version = kOldestReadableFormatVersion - 1;
  bytes.clear();
  encode_file_header(h, &bytes);
  Status old = decode_file_header(bytes, FileKind::Wal, "000007.wal").status();
  CHECK(old.code() == Code::NotSupported);
  CHECK(old.message().find("format version 1") != std::string::npos);
}
