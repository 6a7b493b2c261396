// skv-test-modules: engine native memory
// skv-test-wasm: off
// Tree::verify (docs/cli.md, "Verify"): a clean database reports every live file (tables, value
// logs, WAL segments, the manifest, CURRENT) with the bytes and entries it read; a byte changed on
// disk in a table is reported for that file alone, even when the block is in the cache; it runs
// while commits, flushes and compactions go on; its progress is monotonic and ends at the total;
// it works on a read-only tree and on an encrypted one. The bit-flip sweep (bitflip_test) checks
// that it finds every flipped byte of tables and value logs.

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "skv/skv.h"
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
      .with_l0_compaction_trigger(2)
      .with_enable_vlog(true)
      .with_vlog_value_threshold(100)
      .with_vlog_max_file_size(32 * 1024);
  return b;
}

std::string key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key-%06d", i);
  return buf;
}

std::string value(int i) {
  return std::string(i % 2 == 0 ? 300 : 30, static_cast<char>('a' + i % 26));
}

void fill(const Tree& tree, int from, int to) {
  for (int i = from; i < to; ++i) require_ok(tree.set(key(i), value(i)));
}

const VerifiedFile* find_kind(const VerifyReport& r, const std::string& kind) {
  for (const auto& f : r.files) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

VerifyReport verify_or_fail(const Tree& tree, const VerifyOptions& options = {}) {
  Result<VerifyReport> r = tree.verify(options);
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return std::move(r).value();
}

}  // namespace

TEST_CASE("verify reports every live file of a clean database") {
  TempDir dir("verify");
  const std::string path = dir.sub("db");
  Tree tree = open_or_fail(on_disk(path));
  fill(tree, 0, 1500);
  require_ok(tree.flush().wait());
  fill(tree, 1500, 1600);  // some commits only in the WAL

  std::vector<std::pair<uint64_t, uint64_t>> progress;
  VerifyOptions options;
  options.progress = [&](uint64_t done, uint64_t total) { progress.emplace_back(done, total); };
  const VerifyReport r = verify_or_fail(tree, options);
  CHECK(r.ok());
  CHECK(r.damaged() == 0);
  for (const char* kind : {"table", "value log", "wal", "manifest", "current"}) {
    INFO(kind);
    CHECK(find_kind(r, kind) != nullptr);
  }
  uint64_t table_entries = 0, bytes = 0;
  for (const auto& f : r.files) {
    INFO(f.name << " " << f.status.to_string());
    CHECK(f.status.ok());
    bytes += f.bytes;
    if (f.kind == "table") table_entries += f.units;
    // Every file but an empty WAL segment holds something. (Sizes are compared below, where no
    // background work can remove or grow a file meanwhile.)
    if (f.kind != "wal") CHECK(f.units > 0);
  }
  CHECK(bytes == r.bytes);
  CHECK(table_entries >= 1500);
  // Progress never goes back and ends at the total.
  REQUIRE(!progress.empty());
  for (size_t i = 1; i < progress.size(); ++i) CHECK(progress[i].first >= progress[i - 1].first);
  CHECK(progress.back().first == progress.back().second);
  require_ok(tree.close());

  // On a read-only open, which writes nothing and runs no background work, every file is read
  // whole: each report's bytes are the file's size on disk.
  Tree ro = open_or_fail(on_disk(path).with_read_only(true));
  const VerifyReport still = verify_or_fail(ro);
  CHECK(still.ok());
  for (const auto& f : still.files) {
    INFO(f.name << " " << f.status.to_string());
    CHECK(f.status.ok());
    CHECK(f.bytes == fs::file_size(path + "/" + f.name));
  }
  require_ok(ro.close());
}

TEST_CASE("verify names the one table whose byte changed on disk, also when it is cached") {
  TempDir dir("verify-damage");
  const std::string path = dir.sub("db");
  Tree tree = open_or_fail(on_disk(path).with_enable_vlog(false));
  fill(tree, 0, 800);
  require_ok(tree.compact_all());
  // Reads fill the block cache with every block: verify must read the disk, not the cache.
  CHECK(read_all(tree).size() == 800);

  std::string victim;
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.path().extension() == ".sst" && (victim.empty() || e.path().string() < victim)) {
      victim = e.path().string();
    }
  }
  REQUIRE(!victim.empty());
  const uint64_t offset = fs::file_size(victim) / 3;
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x20);
    f.seekp(static_cast<std::streamoff>(offset));
    f.write(&c, 1);
  }
  const VerifyReport r = verify_or_fail(tree);
  CHECK(!r.ok());
  CHECK(r.damaged() == 1);
  const std::string name = fs::path(victim).filename().string();
  for (const auto& f : r.files) {
    INFO(f.name << " " << f.status.to_string());
    if (f.name == name) {
      CHECK(f.status.code() == Code::Corruption);
      CHECK(f.status.message().find(name) != std::string::npos);
      CHECK(f.status.message().find("offset") != std::string::npos);
    } else {
      CHECK(f.status.ok());
    }
  }
  // The tree still answers from its cache: verify changed nothing.
  CHECK(read_all(tree).size() == 800);
  require_ok(tree.close());
}

TEST_CASE("verify runs while commits, flushes and compactions go on") {
  TempDir dir("verify-live");
  Tree tree = open_or_fail(on_disk(dir.sub("db")));
  fill(tree, 0, 500);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    for (int i = 500; !stop.load(); ++i) {
      if (!tree.set(key(i % 5000), value(i)).ok()) ++failures;
    }
  });
  for (int round = 0; round < 5; ++round) {
    const VerifyReport r = verify_or_fail(tree);
    for (const auto& f : r.files) {
      INFO(f.name << " " << f.status.to_string() << " " << f.note);
      CHECK(f.status.ok());
    }
  }
  stop = true;
  writer.join();
  CHECK(failures.load() == 0);
  require_ok(tree.close());
  CHECK(tree.verify().status().code() == Code::Closed);
}

TEST_CASE("verify checks an encrypted database's seals with its keys") {
  TempDir dir("verify-enc");
  auto km = SoftwareKeyManager::from_bytes(std::string(32, 'v'), 3);
  REQUIRE(km.ok());
  Tree tree = open_or_fail(on_disk(dir.sub("db")).with_encryption(*km));
  fill(tree, 0, 600);
  require_ok(tree.flush().wait());
  const VerifyReport r = verify_or_fail(tree);
  CHECK(r.ok());
  CHECK(find_kind(r, "value log") != nullptr);
  CHECK(find_kind(r, "current")->units == 1);
  require_ok(tree.close());
}
