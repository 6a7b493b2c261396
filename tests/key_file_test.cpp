// skv-test-modules: util posix native
// skv-test-wasm: off
// SoftwareKeyManager::from_key_file on real files: 32 raw bytes or 64 hex digits, files their
// group or others may read refused, symbolic links, directories, missing and oversized files,
// and messages that never hold key bytes.

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "skv/encryption.h"
#include "support/temp_dir.h"

using namespace skv;
using skv::testing::TempDir;

namespace {

std::string write_file(const TempDir& dir, const std::string& name, const std::string& bytes,
                       mode_t mode) {
  const std::string path = dir.sub(name);
  std::ofstream(path, std::ios::binary) << bytes;
  REQUIRE(::chmod(path.c_str(), mode) == 0);
  return path;
}

const std::string kHex = "6b6579206f6e65206b6579206f6e65206b6579206f6e65206b6579206f6e6521";

}  // namespace

TEST_CASE("a key file of 64 hex digits or 32 raw bytes, readable by its owner only",
          "[crypto][key-file]") {
  TempDir dir("key-file");
  auto hex = SoftwareKeyManager::from_key_file(write_file(dir, "hex", kHex + "\n", 0600));
  REQUIRE(hex.ok());
  CHECK((*hex)->active_key_id() == 1);
  SecretKey k;
  REQUIRE((*hex)->root_key(1, &k).ok());
  CHECK(k.data()[0] == 0x6b);
  CHECK(k.data()[31] == 0x21);

  auto raw =
      SoftwareKeyManager::from_key_file(write_file(dir, "raw", std::string(32, 'r'), 0400), 5);
  REQUIRE(raw.ok());
  CHECK((*raw)->active_key_id() == 5);
  REQUIRE((*raw)->root_key(5, &k).ok());
  CHECK(k.data()[7] == 'r');
}

TEST_CASE("key files that are refused, by name, without their bytes in the message",
          "[crypto][key-file]") {
  TempDir dir("key-file");
  auto refused = [](const std::string& path, Code code, const std::string& says) {
    auto m = SoftwareKeyManager::from_key_file(path);
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().code() == code);
    CHECK(m.status().message().find(says) != std::string::npos);
    CHECK(m.status().message().find(path) != std::string::npos);
    CHECK(m.status().message().find("6b6579") == std::string::npos);
  };
  refused(write_file(dir, "group", kHex, 0640), Code::InvalidArgument, "mode 0640");
  refused(write_file(dir, "others", kHex, 0604), Code::InvalidArgument, "group or others");
  refused(write_file(dir, "short", kHex.substr(2), 0600), Code::InvalidArgument, "62 bytes");
  refused(write_file(dir, "long", std::string(200, 'a'), 0600), Code::InvalidArgument, "too long");
  std::string bad = kHex;
  bad[10] = 'x';
  refused(write_file(dir, "nonhex", bad, 0600), Code::InvalidArgument, "position 10");
  refused(dir.sub("missing"), Code::NotFound, "does not exist");
  refused(dir.path, Code::InvalidArgument, "not a regular file");
  const std::string target = write_file(dir, "target", kHex, 0600);
  REQUIRE(::symlink(target.c_str(), dir.sub("link").c_str()) == 0);
  refused(dir.sub("link"), Code::InvalidArgument, "symbolic link");
}
