// skv-test-modules: util wal memtable sstable version engine posix fault
// skv-test-wasm: off
// The fault wrapper over the POSIX platform, on real temporary directories: a failed WAL sync and
// a failed table write surface as errors that name the file and the cause, leave nothing half
// written on disk, and the database reopens with every acknowledged commit once the fault is
// gone. The per-target call counts show which syncs reached the files.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "platform/fault/fault_platform.h"
#include "platform/posix/posix_platform.h"
#include "skv/queue_executor.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;
namespace fs = std::filesystem;

namespace {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end.
struct TempDir {
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                       "/skv-fault-posix-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

// A POSIX platform whose background work runs when the test (or a wait) drives it, wrapped.
struct World {
  TempDir dir;
  std::string db = dir.path + "/db";
  std::shared_ptr<FaultPlatform> platform = std::make_shared<FaultPlatform>(
      std::make_shared<PosixPlatform>(std::make_shared<QueueExecutor>()));

  TreeBuilder builder() const { return small_tree(platform, db); }

  // The names in the database directory that end in `suffix`.
  std::vector<std::string> files_ending(const std::string& suffix) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(db)) {
      const std::string name = e.path().filename().string();
      if (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back(name);
      }
    }
    return out;
  }
};

}  // namespace

TEST_CASE("POSIX: a failed WAL sync fails the commit with its cause, reopen recovers",
          "[fault][posix]") {
  World w;
  {
    Tree tree = open_or_fail(w.builder());
    require_ok(commit_one(tree, "before", Durability::Immediate));
    const uint64_t wal_syncs = w.platform->call_count(FaultOp::Sync, ".wal");
    CHECK(wal_syncs > 0);
    // Eventual commits never sync the WAL.
    for (int i = 0; i < 5; ++i)
      require_ok(commit_one(tree, "e" + std::to_string(i), Durability::Eventual));
    CHECK(w.platform->call_count(FaultOp::Sync, ".wal") == wal_syncs);

    FaultRule rule = FaultRule::nth_call(FaultOp::Sync, 1);
    rule.target_contains = ".wal";
    w.platform->set_fault_policy(FaultPolicy{{rule}, 0});
    Status s = commit_one(tree, "failed", Durability::Immediate);
    INFO(s.to_string());
    CHECK(s.code() == Code::IO);
    CHECK(s.message().find("injected sync fault") != std::string::npos);
    CHECK(s.message().find(w.db + "/") != std::string::npos);  // the WAL file, by its path
    CHECK(s.message().find(".wal") != std::string::npos);
    CHECK(w.platform->faults_injected() == 1);
    w.platform->clear_faults();
    // Sticky: the tree takes no more writes, and asks for no more WAL syncs.
    const uint64_t after_failure = w.platform->call_count(FaultOp::Sync, ".wal");
    Status later = commit_one(tree, "later", Durability::Immediate);
    CHECK(later.code() == Code::IO);
    CHECK(later.message().find("write-ahead log") != std::string::npos);
    CHECK(w.platform->call_count(FaultOp::Sync, ".wal") == after_failure);
    Transaction r = begin_or_fail(tree, Mode::ReadOnly);
    CHECK(get_or_fail(r, "before") == "v-before");
    (void)tree.close();
  }
  Tree tree = open_or_fail(w.builder());
  Transaction r = begin_or_fail(tree, Mode::ReadOnly);
  CHECK(get_or_fail(r, "before") == "v-before");
  CHECK_FALSE(get_or_fail(r, "later").has_value());
  require_ok(commit_one(tree, "after", Durability::Immediate));
  require_ok(tree.close());
}

TEST_CASE("POSIX: a failed table write fails the flush with its cause and leaves no table",
          "[fault][posix]") {
  World w;
  Model model;
  FaultRule rule;
  std::string cause;
  SECTION("an append of the table fails") {
    rule = FaultRule::every_call(FaultOp::Write);
    cause = "injected write fault";
  }
  SECTION("finishing the table fails") {
    rule = FaultRule::every_call(FaultOp::Sync);
    cause = "injected sync fault";
  }
  rule.target_contains = ".sst";
  {
    Tree tree = open_or_fail(w.builder());
    for (int i = 0; i < 50; ++i) {
      require_ok(commit_one(tree, "k" + std::to_string(i), Durability::Immediate));
      model["k" + std::to_string(i)] = "v-k" + std::to_string(i);
    }
    w.platform->set_fault_policy(FaultPolicy{{rule}, 0});
    Status s = tree.flush().wait();
    INFO(s.to_string());
    CHECK(s.code() == Code::IO);
    CHECK(s.message().find(cause) != std::string::npos);
    CHECK(s.message().find(w.db + "/") != std::string::npos);
    CHECK(s.message().find(".sst") != std::string::npos);
    CHECK(w.platform->faults_injected() > 0);
    // Nothing half written stays on disk: no table, no partial file.
    CHECK(w.files_ending(".sst").empty());
    CHECK(w.files_ending(".partial").empty());
    CHECK_FALSE(commit_one(tree, "later", Durability::Immediate).ok());
    CHECK(read_all(tree) == model);
    w.platform->clear_faults();
    (void)tree.close();
  }
  Tree tree = open_or_fail(w.builder());
  CHECK(read_all(tree) == model);
  require_ok(tree.flush().wait());
  CHECK_FALSE(w.files_ending(".sst").empty());
  CHECK(read_all(tree) == model);
  require_ok(tree.close());
}
