// Opens a tree in a fresh temporary directory with the default platform, commits one key,
// reads it back, closes the tree, checks the database is on disk (skv::memory is linked too, and
// first), opens an in-memory tree the explicit way and removes the directory. Exit status 0 on
// success.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "skv/skv.h"

std::shared_ptr<skv::Platform> make_memory_platform();  // memory_header.cpp

namespace {

int fail(const char* step, const skv::Status& s) {
  std::fprintf(stderr, "skv consumer: %s: %s\n", step, s.to_string().c_str());
  return 1;
}

int run(const std::string& dir) {
  skv::Result<skv::Tree> tree = skv::TreeBuilder().with_path(dir).build();
  if (!tree.ok()) return fail("open", tree.status());

  skv::Result<skv::Transaction> tx = tree->begin();
  if (!tx.ok()) return fail("begin", tx.status());
  tx->set_durability(skv::Durability::Immediate);
  if (skv::Status s = tx->set("greeting", "hello from a consumer"); !s.ok()) {
    return fail("set", s);
  }
  if (skv::Status s = tx->commit().wait(); !s.ok()) return fail("commit", s);

  skv::Result<skv::Transaction> reader = tree->begin_with_mode(skv::Mode::ReadOnly);
  if (!reader.ok()) return fail("begin read-only", reader.status());
  skv::Result<std::optional<std::string>> value = reader->get("greeting");
  if (!value.ok()) return fail("get", value.status());
  if (!value->has_value() || **value != "hello from a consumer") {
    std::fprintf(stderr, "skv consumer: get returned the wrong value\n");
    return 1;
  }
  if (skv::Status s = tree->close(); !s.ok()) return fail("close", s);
  if (!std::filesystem::exists(dir + "/CURRENT")) {
    std::fprintf(stderr, "skv consumer: the tree opened by path is not on disk\n");
    return 1;
  }
  skv::Result<skv::Tree> in_memory =
      skv::TreeBuilder().with_path(dir + "-mem").with_platform(make_memory_platform()).build();
  if (!in_memory.ok()) return fail("open in memory", in_memory.status());
  if (skv::Status s = in_memory->close(); !s.ok()) return fail("close in memory", s);
  if (std::filesystem::exists(dir + "-mem")) {
    std::fprintf(stderr, "skv consumer: the in-memory tree wrote to disk\n");
    return 1;
  }
  std::printf("skv consumer: ok (%s)\n", (*value)->c_str());
  return 0;
}

}  // namespace

int main() {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "skv-consumer-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("skv consumer: mkdtemp");
    return 1;
  }
  const int rc = run(pattern + "/db");
  std::filesystem::remove_all(pattern, ec);
  return rc;
}
