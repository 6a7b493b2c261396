// skv-test-modules: engine native
// skv-test-wasm: off
// The open rules on real directories: what an open creates, what it refuses and what it leaves
// alone (docs/open.md).

#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "skv/skv.h"
#include "support/dir_snapshot.h"
#include "support/temp_dir.h"

using namespace skv;
using skv::testing::TempDir;
namespace fs = std::filesystem;

namespace {

using skv::testing::dir_snapshot;

Result<Tree> open_existing(const std::string& path) {
  return TreeBuilder().with_path(path).with_create_if_missing(false).build();
}

}  // namespace

TEST_CASE("opening without create refuses a folder that is not a database and changes nothing",
          "[open]") {
  TempDir tmp;
  const std::string dir = tmp.sub("folder");
  fs::create_directories(dir + "/sub");
  std::ofstream(dir + "/notes.txt") << "mine";
  std::ofstream(dir + "/video.mp4.partial") << "half a download";
  std::ofstream(dir + "/000001.sst.partial") << "a lookalike";
  std::ofstream(dir + "/sub/deeper.txt") << "also mine";
  const std::string before = dir_snapshot(dir);

  Result<Tree> t = open_existing(dir);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == Code::NotFound);
  CHECK(t.status().message().find(dir) != std::string::npos);
  CHECK(dir_snapshot(dir) == before);
}

TEST_CASE("opening without create refuses an empty folder and a missing path", "[open]") {
  TempDir tmp;
  const std::string empty = tmp.sub("empty");
  fs::create_directories(empty);
  Result<Tree> t = open_existing(empty);
  CHECK(t.status().code() == Code::NotFound);
  CHECK(fs::is_empty(empty));

  const std::string missing = tmp.sub("a/b/missing");
  Result<Tree> m = open_existing(missing);
  CHECK(m.status().code() == Code::NotFound);
  CHECK(m.status().message().find(missing) != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.sub("a")));
}

TEST_CASE("a database opens without create, and with create an existing folder becomes one",
          "[open]") {
  TempDir tmp;
  const std::string dir = tmp.sub("db");
  fs::create_directories(dir);
  std::ofstream(dir + "/README.txt") << "the user's file stays";
  {
    Result<Tree> t = TreeBuilder().with_path(dir).build();
    REQUIRE(t.ok());
    Transaction tx = std::move(t->begin().value());
    REQUIRE(tx.set("k", "v").ok());
    tx.set_durability(Durability::Immediate);
    REQUIRE(tx.commit().wait().ok());
    REQUIRE(t->close().ok());
  }
  CHECK(fs::exists(dir + "/CURRENT"));
  Result<Tree> t = open_existing(dir);
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  Transaction r = std::move(t->begin_with_mode(Mode::ReadOnly).value());
  CHECK(r.get("k")->value_or("") == "v");
  REQUIRE(t->close().ok());
  std::ifstream in(dir + "/README.txt");
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "the user's file stays");
}

TEST_CASE("a refused open removes nothing, partial files included", "[open]") {
  TempDir tmp;
  const std::string dir = tmp.sub("db");
  {
    Result<Tree> t = TreeBuilder().with_path(dir).build();
    REQUIRE(t.ok());
    REQUIRE(t->close().ok());
  }
  std::ofstream(dir + "/video.mp4.partial") << "the user's";
  {
    // Busy: the database is open elsewhere. The second open must not touch anything.
    Result<Tree> holder = open_existing(dir);
    REQUIRE(holder.ok());
    std::ofstream(dir + "/000099.sst.partial") << "the holder's table being written";
    Result<Tree> second = open_existing(dir);
    CHECK(second.status().code() == Code::Busy);
    CHECK(fs::exists(dir + "/000099.sst.partial"));
    REQUIRE(holder->close().ok());
  }
  // The next owner removes the partial file of its own kind, never the user's.
  Result<Tree> t = open_existing(dir);
  REQUIRE(t.ok());
  CHECK_FALSE(fs::exists(dir + "/000099.sst.partial"));
  CHECK(fs::exists(dir + "/video.mp4.partial"));
  REQUIRE(t->close().ok());
}

TEST_CASE("a file numbered at the edge of the number space stops the open before any write",
          "[open]") {
  TempDir tmp;
  const std::string dir = tmp.sub("db");
  {
    Result<Tree> t = TreeBuilder().with_path(dir).build();
    REQUIRE(t.ok());
    REQUIRE(t->set("k", "v").ok());
    REQUIRE(t->close().ok());
  }
  // A stray file named like a table, numbered just below the bound: the next number would be
  // the bound itself, which no file of the database may carry.
  const std::string stray = dir + "/72057594037927935.sst";
  std::ofstream(stray) << "not a table";
  const std::string before = dir_snapshot(dir);
  Result<Tree> refused = open_existing(dir);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Code::Corruption);
  CHECK(refused.status().message().find("file numbers are exhausted") != std::string::npos);
  CHECK(dir_snapshot(dir) == before);  // nothing written, nothing removed (the stray file stays)
  std::filesystem::remove(stray);
  Result<Tree> t = open_existing(dir);
  INFO(t.status().to_string());
  REQUIRE(t.ok());
  CHECK(t->get("k")->value_or("") == "v");
  REQUIRE(t->close().ok());
}

TEST_CASE("files are the owner's alone by default, and file_mode widens them", "[open]") {
  TempDir tmp;
  const mode_t old_umask = ::umask(022);
  auto mode_of = [](const std::string& path) {
    struct stat st;
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  auto check_tree = [&](const std::string& dir, mode_t files, mode_t dirs) {
    INFO(dir);
    CHECK(mode_of(dir) == dirs);
    for (const auto& e : fs::directory_iterator(dir)) {
      INFO(e.path().string());
      CHECK(mode_of(e.path().string()) == files);
    }
  };
  {
    Result<Tree> t = TreeBuilder().with_path(tmp.sub("private/db")).build();
    REQUIRE(t.ok());
    REQUIRE(t->set("k", "v").ok());
    REQUIRE(t->flush().wait().ok());  // a table, a manifest, CURRENT, WAL segments, LOCK
    REQUIRE(t->close().ok());
  }
  check_tree(tmp.sub("private/db"), 0600, 0700);
  CHECK(mode_of(tmp.sub("private")) == 0700);  // a parent it created
  {
    Result<Tree> t = TreeBuilder().with_path(tmp.sub("shared")).with_file_mode(0640).build();
    REQUIRE(t.ok());
    REQUIRE(t->set("k", "v").ok());
    REQUIRE(t->flush().wait().ok());
    REQUIRE(t->close().ok());
  }
  check_tree(tmp.sub("shared"), 0640, 0750);
  for (uint32_t bad : {0400u, 0200u, 01600u, 0u}) {
    Result<Tree> t = TreeBuilder().with_path(tmp.sub("bad")).with_file_mode(bad).build();
    CHECK(t.status().code() == Code::InvalidArgument);
    CHECK_FALSE(fs::exists(tmp.sub("bad")));
  }
  ::umask(old_umask);
}
