// skv-test-modules: engine native memory
// skv-test-wasm: off
// Read-only opens and checkpoints (docs/cli.md): a read-only tree replays the WAL in memory and
// leaves the directory byte-identical, refuses every write by name, and shares its lock with
// other readers but not with a writer; a checkpoint taken while commits go on opens as a database
// holding a prefix of the commits (every commit acknowledged before the call), links tables
// natively, is sealed like its source, refuses a path that exists without touching it, and a
// checkpoint of a read-only tree restores a database whose last commits are only in its WAL.

#include <sys/stat.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "format/file_names.h"
#include "platform/memory/memory_platform.h"
#include "skv/skv.h"
#include "support/dir_snapshot.h"
#include "support/temp_dir.h"
#include "support/tree_fixture.h"

using namespace skv;
using namespace skv::testing;
namespace fs = std::filesystem;

namespace {

TreeBuilder on_disk(const std::string& path) {
  TreeBuilder b;
  b.with_path(path)
      .with_memtable_size(16 * 1024)
      .with_block_size(1024)
      .with_target_file_size(64 * 1024)
      .with_level_base_bytes(128 * 1024)
      .with_l0_compaction_trigger(2);
  return b;
}

std::string key(int thread, int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "t%d-%06d", thread, i);
  return buf;
}

// Writes `n` keys, flushing halfway, so the database has tables and unflushed WAL records.
Model fill(const Tree& tree, int n) {
  Model model;
  for (int i = 0; i < n; ++i) {
    model[key(0, i)] = "value-" + std::to_string(i);
    require_ok(tree.set(key(0, i), model[key(0, i)]));
    if (i == n / 2) require_ok(tree.flush().wait());
  }
  return model;
}

fs::path newest_wal(const std::string& dir) {
  fs::path newest;
  uint64_t best = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    FileType type;
    uint64_t number = 0;
    if (parse_file_name(e.path().filename().string(), &type, &number) && type == FileType::Wal &&
        number >= best && fs::file_size(e.path()) > 0) {
      best = number;
      newest = e.path();
    }
  }
  return newest;
}

}  // namespace

TEST_CASE("a read-only open replays the WAL in memory, refuses writes and changes no byte") {
  TempDir dir("ro");
  const std::string path = dir.sub("db");
  Model model;
  {
    Tree tree = open_or_fail(on_disk(path));
    model = fill(tree, 600);
    require_ok(tree.close());
  }
  // Cut the newest WAL segment inside its last record: a torn tail, which a writable open cuts.
  const fs::path wal = newest_wal(path);
  REQUIRE(!wal.empty());
  fs::resize_file(wal, fs::file_size(wal) - 3);
  model.erase(key(0, 599));
  const std::string before = dir_snapshot(path);

  Tree ro = open_or_fail(on_disk(path).with_read_only(true));
  CHECK(read_all(ro) == model);
  Result<std::optional<std::string>> got = ro.get(key(0, 598));
  REQUIRE(got.ok());
  CHECK(got->value_or("") == model[key(0, 598)]);

  // Every write is refused by name.
  CHECK(ro.set("k", "v").code() == Code::ReadOnly);
  CHECK(ro.del(key(0, 1)).code() == Code::ReadOnly);
  CHECK(ro.begin_with_mode(Mode::WriteOnly).status().code() == Code::ReadOnly);
  Transaction tx = begin_or_fail(ro);  // begin() reads
  CHECK(tx.set("k", "v").code() == Code::ReadOnly);
  CHECK(ro.flush().wait().code() == Code::ReadOnly);
  CHECK(ro.compact_all().code() == Code::ReadOnly);
  CHECK(ro.collect_vlog_garbage().code() == Code::ReadOnly);
  CHECK(ro.rewrite_with_active_key().code() == Code::ReadOnly);
  (void)tx.rollback();
  require_ok(ro.close());
  CHECK(dir_snapshot(path) == before);

  // A writable open afterwards still finds everything (and cuts the tail itself).
  Tree rw = open_or_fail(on_disk(path).with_create_if_missing(false));
  CHECK(read_all(rw) == model);
  require_ok(rw.close());
}

TEST_CASE("a read-only open of a missing database is NotFound and creates nothing") {
  TempDir dir("ro-missing");
  const std::string path = dir.sub("nothing/here");
  Result<Tree> t = on_disk(path).with_read_only(true).build();
  CHECK(t.status().code() == Code::NotFound);
  CHECK(!fs::exists(dir.sub("nothing")));

  // A directory that holds no database: NotFound, and no LOCK file appears.
  fs::create_directories(dir.sub("empty"));
  Result<Tree> e = on_disk(dir.sub("empty")).with_read_only(true).build();
  CHECK(e.status().code() == Code::NotFound);
  CHECK(fs::is_empty(dir.sub("empty")));
}

TEST_CASE("read-only trees share the database, a writer excludes them") {
  auto check = [](const std::function<TreeBuilder()>& builder) {
    {
      Tree w = open_or_fail(builder());
      require_ok(w.set("a", "1"));
      // A reader while the writer holds the database: Busy.
      CHECK(builder().with_read_only(true).build().status().code() == Code::Busy);
      require_ok(w.close());
    }
    Tree r1 = open_or_fail(builder().with_read_only(true));
    Tree r2 = open_or_fail(builder().with_read_only(true));
    CHECK(r2.get("a")->value_or("") == "1");
    // A writer while readers hold it: Busy.
    CHECK(builder().build().status().code() == Code::Busy);
    require_ok(r1.close());
    CHECK(builder().build().status().code() == Code::Busy);
    require_ok(r2.close());
    Tree w = open_or_fail(builder());
    require_ok(w.close());
  };
  SECTION("POSIX") {
    TempDir dir("ro-lock");
    check([&] { return on_disk(dir.sub("db")); });
  }
  SECTION("memory") {
    auto platform = std::make_shared<MemoryPlatform>();
    check([&] { return small_tree(platform); });
  }
}

TEST_CASE("a checkpoint under concurrent commits holds every commit acknowledged before it") {
  TempDir dir("cp");
  const std::string path = dir.sub("db");
  Tree tree = open_or_fail(on_disk(path));
  constexpr int kThreads = 4;
  std::atomic<int> acked[kThreads] = {};
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};  // Catch2's assertions are not for other threads
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; !stop.load(); ++i) {
        // Eventual: acknowledged once in the WAL and the memtable, before any sync.
        Result<Transaction> tx = tree.begin();
        if (!tx.ok() ||
            !tx->set(key(t, i), std::string(100, static_cast<char>('a' + i % 26))).ok()) {
          ++failures;
          return;
        }
        tx->set_durability(Durability::Eventual);
        if (!tx->commit().wait().ok()) {
          ++failures;
          return;
        }
        acked[t].store(i + 1);
      }
    });
  }
  struct Taken {
    std::string path;
    int acked_before[kThreads];
  };
  std::vector<Taken> taken;
  for (int c = 0; c < 4; ++c) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    Taken cp;
    cp.path = dir.sub("cp" + std::to_string(c));
    for (int t = 0; t < kThreads; ++t) cp.acked_before[t] = acked[t].load();
    require_ok(tree.checkpoint(cp.path));
    taken.push_back(cp);
  }
  stop = true;
  for (auto& w : writers) w.join();
  REQUIRE(failures.load() == 0);
  const Model source = read_all(tree);

  for (const Taken& cp : taken) {
    INFO(cp.path);
    Tree copy = open_or_fail(on_disk(cp.path).with_create_if_missing(false));
    const Model m = read_all(copy);
    // Per writer, its keys are exactly its first k commits (each writer commits in order, so a
    // prefix of the commits is a prefix of every writer's), with k at least what was
    // acknowledged before the call, and the values are the source's.
    size_t total = 0;
    for (int t = 0; t < kThreads; ++t) {
      int k = 0;
      while (m.count(key(t, k)) != 0) ++k;
      CHECK(k >= cp.acked_before[t]);
      total += static_cast<size_t>(k);
      if (k > 0) CHECK(m.at(key(t, k - 1)) == source.at(key(t, k - 1)));
    }
    CHECK(m.size() == total);  // no key beyond a writer's prefix
    // The checkpoint is a database of its own: it takes writes the source never sees.
    require_ok(copy.set("only-in-checkpoint", "x"));
    require_ok(copy.close());
    CHECK(!tree.get("only-in-checkpoint")->has_value());
  }

  require_ok(tree.close());
}

TEST_CASE("a checkpoint refuses a path that exists and changes nothing there") {
  TempDir dir("cp-exists");
  Tree tree = open_or_fail(on_disk(dir.sub("db")));
  require_ok(tree.set("a", "1"));
  fs::create_directories(dir.sub("empty"));
  fs::create_directories(dir.sub("full"));
  std::ofstream(dir.sub("full/notes.txt")) << "mine";
  std::ofstream(dir.sub("file")) << "a file";
  // The source's own files change (its close), so the snapshot leaves them out.
  const std::string before = dir_snapshot(dir.path, dir.sub("db"));
  for (const char* target : {"empty", "full", "file", "db"}) {
    INFO(target);
    Status s = tree.checkpoint(dir.sub(target));
    CHECK(s.code() == Code::InvalidArgument);
    CHECK(s.message().find("exists") != std::string::npos);
  }
  CHECK(tree.checkpoint("").code() == Code::InvalidArgument);
  require_ok(tree.close());
  CHECK(dir_snapshot(dir.path, dir.sub("db")) == before);
}

TEST_CASE("a checkpoint of an encrypted database is sealed under the same keys") {
  TempDir dir("cp-enc");
  auto km = SoftwareKeyManager::from_bytes(std::string(32, 'k'), 7);
  REQUIRE(km.ok());
  auto builder = [&](const std::string& p) {
    return on_disk(p).with_enable_vlog(true).with_vlog_value_threshold(64).with_encryption(*km);
  };
  Tree tree = open_or_fail(builder(dir.sub("db")));
  Model model;
  for (int i = 0; i < 300; ++i) {
    model[key(0, i)] = "secret-" + std::string(i % 2 == 0 ? 200 : 20, 'z');
    require_ok(tree.set(key(0, i), model[key(0, i)]));
  }
  const std::string cp = dir.sub("cp");
  require_ok(tree.checkpoint(cp));
  require_ok(tree.close());

  // CURRENT carries its seal, and no file holds a key or a value in the clear.
  std::ifstream current(cp + "/CURRENT");
  std::string line1, line2;
  std::getline(current, line1);
  std::getline(current, line2);
  CHECK(line2.rfind("sealed v1 ", 0) == 0);
  for (const auto& e : fs::directory_iterator(cp)) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    CHECK(bytes.find("secret-") == std::string::npos);
    CHECK(bytes.find("t0-000") == std::string::npos);
  }
  const std::string before = dir_snapshot(cp);
  CHECK(on_disk(cp).with_create_if_missing(false).build().status().encryption_error() ==
        EncryptionError::NotConfigured);
  auto wrong = SoftwareKeyManager::from_bytes(std::string(32, 'w'), 7);
  REQUIRE(wrong.ok());
  CHECK(on_disk(cp)
            .with_create_if_missing(false)
            .with_encryption(*wrong)
            .build()
            .status()
            .encryption_error() == EncryptionError::WrongKey);
  CHECK(dir_snapshot(cp) == before);
  Tree copy = open_or_fail(builder(cp).with_create_if_missing(false));
  CHECK(read_all(copy) == model);
  require_ok(copy.close());
}

TEST_CASE("a checkpoint of a read-only tree restores commits that were only in the WAL") {
  TempDir dir("restore");
  const std::string path = dir.sub("db");
  Model model;
  {
    Tree tree = open_or_fail(on_disk(path));
    model = fill(tree, 500);  // the second half is in the WAL only
    require_ok(tree.close());
  }
  const std::string before = dir_snapshot(path);
  Tree ro = open_or_fail(on_disk(path).with_read_only(true));
  const std::string restored = dir.sub("restored");
  require_ok(ro.checkpoint(restored));
  require_ok(ro.close());
  CHECK(dir_snapshot(path) == before);
  // Tables are hard links of the source's (one file system; a read-only source runs no
  // compaction that could remove them meanwhile). The WAL was copied, not linked: the source
  // may append to its own later.
  int tables = 0;
  for (const auto& e : fs::directory_iterator(restored)) {
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(e.path().filename().string(), &type, &number)) continue;
    if (type != FileType::Table && type != FileType::Wal) continue;  // the manifest is new
    struct stat copy = {}, source = {};
    REQUIRE(::stat(e.path().c_str(), &copy) == 0);
    REQUIRE(::stat((path + "/" + e.path().filename().string()).c_str(), &source) == 0);
    if (type == FileType::Table) {
      ++tables;
      CHECK(copy.st_ino == source.st_ino);
    }
    if (type == FileType::Wal) CHECK(copy.st_ino != source.st_ino);
  }
  CHECK(tables > 0);
  Tree copy = open_or_fail(on_disk(restored).with_create_if_missing(false));
  CHECK(read_all(copy) == model);
  require_ok(copy.close());
}

TEST_CASE("a checkpoint on the memory platform copies the files and keeps every version") {
  auto platform = std::make_shared<MemoryPlatform>();
  Tree tree = open_or_fail(small_tree(platform).with_versioning(true, 0));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) {
      require_ok(tree.set(key(0, i), "r" + std::to_string(round) + "-" + std::to_string(i)));
    }
  }
  require_ok(tree.checkpoint("copy"));
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<std::vector<KeyVersion>> want = tx.history(key(0, 7));
  REQUIRE(want.ok());
  (void)tx.rollback();
  require_ok(tree.close());

  Tree copy = open_or_fail(small_tree(platform, "copy").with_create_if_missing(false));
  CHECK(copy.versioning().enabled);
  Transaction ctx = begin_or_fail(copy, Mode::ReadOnly);
  Result<std::vector<KeyVersion>> got = ctx.history(key(0, 7));
  REQUIRE(got.ok());
  REQUIRE(got->size() == 3);
  REQUIRE(got->size() == want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    CHECK((*got)[i].value == (*want)[i].value);
    CHECK((*got)[i].timestamp == (*want)[i].timestamp);
  }
  (void)ctx.rollback();
  require_ok(copy.close());
}
