// Linked against skv::memory first and skv::native second (tests/CMakeLists.txt), the order in
// which a linker that picks the first definition it meets would once have taken the in-memory
// default platform. A tree opened by path must still keep its data in the directory, and an
// in-memory tree is had only by asking for one.

#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "skv/memory_platform.h"
#include "skv/skv.h"

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string temp_dir() {
  std::string pattern = "/tmp/skv-link-XXXXXX";
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

}  // namespace

TEST_CASE("a path opened without a platform is a directory on disk, whatever else is linked",
          "[platform]") {
  const std::string dir = temp_dir() + "/db";
  {
    skv::Result<skv::Tree> tree = skv::TreeBuilder().with_path(dir).build();
    INFO(tree.status().to_string());
    REQUIRE(tree.ok());
    skv::Transaction tx = std::move(tree->begin().value());
    REQUIRE(tx.set("k", "v").ok());
    tx.set_durability(skv::Durability::Immediate);
    REQUIRE(tx.commit().wait().ok());
    REQUIRE(tree->close().ok());
  }
  CHECK(exists(dir + "/CURRENT"));
  CHECK(exists(dir + "/LOCK"));
  // A second, fresh handle finds the commit: it was on disk, not in this process's memory.
  skv::Result<skv::Tree> again =
      skv::TreeBuilder().with_path(dir).with_create_if_missing(false).build();
  REQUIRE(again.ok());
  skv::Transaction r = std::move(again->begin_with_mode(skv::Mode::ReadOnly).value());
  skv::Result<std::optional<std::string>> v = r.get("k");
  REQUIRE(v.ok());
  CHECK(v->value_or("") == "v");
  REQUIRE(again->close().ok());
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path());
}

TEST_CASE("an in-memory tree is one asked for by name", "[platform]") {
  const std::string base = temp_dir();
  const std::string dir = base + "/db";
  auto memory = std::make_shared<skv::MemoryPlatform>();
  skv::Result<skv::Tree> tree = skv::TreeBuilder().with_path(dir).with_platform(memory).build();
  REQUIRE(tree.ok());
  skv::Transaction tx = std::move(tree->begin().value());
  REQUIRE(tx.set("k", "v").ok());
  REQUIRE(tx.commit().wait().ok());
  REQUIRE(tree->close().ok());
  CHECK_FALSE(exists(dir));
  CHECK(memory->database_exists(dir));
  ::rmdir(base.c_str());
}
