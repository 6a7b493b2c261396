// hello: the smallest complete skv program. Opens (creating) a database in a directory, writes
// three keys in one transaction, reads one back, scans a key range in order and closes.
//
//   hello [directory]      (default: ./hello-db)
//
// Every skv call returns a Status or a Result<T>; nothing throws. A failed call ends the program
// with the error's text, which names the file involved.

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "skv/skv.h"

namespace {

int fail(const char* what, const skv::Status& s) {
  std::fprintf(stderr, "hello: %s: %s\n", what, s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "hello-db";

  // A Tree is a shared handle to one open database; build() opens it (creating it if missing).
  skv::Result<skv::Tree> tree = skv::TreeBuilder().with_path(dir).build();
  if (!tree.ok()) return fail("open", tree.status());

  // Writes are buffered in the transaction and become visible together when it commits.
  // commit() returns a future; wait() blocks until the commit is durable (the default).
  skv::Result<skv::Transaction> tx = tree->begin();
  if (!tx.ok()) return fail("begin", tx.status());
  const std::pair<const char*, const char*> rows[] = {
      {"fruit:apple", "red"}, {"fruit:kiwi", "green"}, {"veg:leek", "white"}};
  for (const auto& [key, value] : rows) {
    if (skv::Status s = tx->set(key, value); !s.ok()) return fail("set", s);
  }
  if (skv::Status s = tx->commit().wait(); !s.ok()) return fail("commit", s);

  // A read-only transaction reads one consistent snapshot.
  skv::Result<skv::Transaction> reader = tree->begin_with_mode(skv::Mode::ReadOnly);
  if (!reader.ok()) return fail("begin read-only", reader.status());
  skv::Result<std::optional<std::string>> kiwi = reader->get("fruit:kiwi");
  if (!kiwi.ok()) return fail("get", kiwi.status());
  std::printf("fruit:kiwi = %s\n", kiwi->has_value() ? (*kiwi)->c_str() : "(absent)");

  // [start, end): every key that starts with "fruit:" (';' is the byte after ':').
  skv::Result<skv::Iterator> it = reader->range("fruit:", "fruit;");
  if (!it.ok()) return fail("range", it.status());
  int count = 0;
  for (it->seek_first(); it->valid(); it->next()) {
    skv::Result<std::string_view> value = it->value();
    if (!value.ok()) return fail("value", value.status());
    std::printf("  %.*s = %.*s\n", static_cast<int>(it->key().size()), it->key().data(),
                static_cast<int>(value->size()), value->data());
    ++count;
  }
  // An iteration that stops early says why in status(); the end of the range is not an error.
  if (skv::Status s = it->status(); !s.ok()) return fail("scan", s);
  std::printf("%d fruit in %s\n", count, dir.c_str());

  if (skv::Status s = tree->close(); !s.ok()) return fail("close", s);
  if (count < 2) {  // the two written above; a reused directory may hold more
    std::fprintf(stderr, "hello: the scan found %d keys, expected at least 2\n", count);
    return 1;
  }
  return 0;
}
