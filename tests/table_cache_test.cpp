// skv-test-modules: util sstable version memory
// TableCache: tables are pinned to their FileMetaData up to a budget, the rest live in the LRU,
// and the number of table files open at once never exceeds max_open.

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "format/file_names.h"
#include "format/internal_key.h"
#include "platform/memory/memory_platform.h"
#include "skv/platform_wrapper.h"
#include "sstable/table_builder.h"
#include "version/table_cache.h"

using namespace skv;

namespace {

// Counts the readers it hands out that are still open, and every open.
class CountingObjects final : public ObjectStoreWrapper {
 public:
  explicit CountingObjects(ObjectStore* target) : ObjectStoreWrapper(target) {}
  std::atomic<int> open_now{0};
  std::atomic<int> opens{0};

 protected:
  std::unique_ptr<ObjectReader> wrap_reader(const std::string&,
                                            std::unique_ptr<ObjectReader> reader) override {
    return std::make_unique<Counted>(std::move(reader), this);
  }

 private:
  class Counted final : public ObjectReaderWrapper {
   public:
    Counted(std::unique_ptr<ObjectReader> target, CountingObjects* owner)
        : ObjectReaderWrapper(std::move(target)), owner_(owner) {
      owner_->open_now.fetch_add(1);
      owner_->opens.fetch_add(1);
    }
    ~Counted() override { owner_->open_now.fetch_sub(1); }

   private:
    CountingObjects* const owner_;
  };
};

class CountingStorage final : public StorageWrapper {
 public:
  explicit CountingStorage(std::unique_ptr<Storage> target)
      : StorageWrapper(std::move(target)), counting(&StorageWrapper::objects()) {}
  ObjectStore& objects() override { return counting; }
  CountingObjects counting;
};

std::string key_of(uint64_t table) { return "key" + std::to_string(1000 + table); }

struct Fixture {
  MemoryPlatform platform;
  std::unique_ptr<CountingStorage> storage;

  Fixture() {
    auto s = platform.open_storage("/db", StorageOptions{});
    REQUIRE(s.ok());
    storage = std::make_unique<CountingStorage>(std::move(*s));
  }

  // Writes table `number` holding one key, key_of(number) -> "v<number>", and returns its
  // metadata.
  std::shared_ptr<FileMetaData> add_table(uint64_t number) {
    auto w = storage->objects().create(table_file_name(number));
    REQUIRE(w.ok());
    TableBuilder b(TableOptions{}, std::move(*w), number);
    const std::string ikey = make_internal_key(key_of(number), 5, ValueKind::Value, 0);
    REQUIRE(b.add(ikey, "v" + std::to_string(number)).ok());
    REQUIRE(b.finish().ok());
    auto f = std::make_shared<FileMetaData>();
    f->number = number;
    f->file_size = b.file_size();
    f->smallest = f->largest = ikey;
    return f;
  }

  int open_now() const { return storage->counting.open_now.load(); }
  int opens() const { return storage->counting.opens.load(); }
};

// Reads key_of(f.number) through the cache and checks the value.
void expect_reads(TableCache& cache, const FileMetaData& f) {
  auto t = cache.get(f);
  REQUIRE(t.ok());
  Table::GetResult r;
  REQUIRE((*t)->get(key_of(f.number), 10, &r).ok());
  REQUIRE(r.found);
  CHECK(r.value == "v" + std::to_string(f.number));
}

}  // namespace

TEST_CASE("a table is pinned to its metadata on first use and found there after", "[table_cache]") {
  Fixture fx;
  auto f = fx.add_table(7);
  TableCache cache(fx.storage.get(), nullptr, 16);
  CHECK(cache.max_pinned() == 14);
  CHECK(f->table.get() == nullptr);

  auto first = cache.get(*f);
  REQUIRE(first.ok());
  CHECK(first->hold == nullptr);
  CHECK(f->table.get() == first->table);
  CHECK(cache.pinned() == 1);
  CHECK(cache.size() == 0);  // the pin owns it; the LRU keeps its place for others
  CHECK(fx.opens() == 1);

  for (int i = 0; i < 5; ++i) expect_reads(cache, *f);
  auto again = cache.get(*f);
  REQUIRE(again.ok());
  CHECK(again->table == first->table);
  CHECK(fx.opens() == 1);

  // A copy describes the same file but does not share (or steal) the open table.
  FileMetaData copy = *f;
  CHECK(copy.table.get() == nullptr);
  CHECK(f->table.get() == first->table);
  FileMetaData assigned;
  assigned = copy;
  CHECK(assigned.table.get() == nullptr);

  // The pin closes the table when the metadata goes.
  f.reset();
  CHECK(cache.pinned() == 0);
  CHECK(fx.open_now() == 0);
}

TEST_CASE("assigning over metadata drops its pin", "[table_cache]") {
  Fixture fx;
  auto a = fx.add_table(1);
  auto b = fx.add_table(2);
  TableCache cache(fx.storage.get(), nullptr, 16);
  REQUIRE(cache.get(*a).ok());
  CHECK(fx.open_now() == 1);
  *a = *b;  // now describes table 2; the pin of table 1 must not survive under that name
  CHECK(a->table.get() == nullptr);
  CHECK(cache.pinned() == 0);
  CHECK(fx.open_now() == 0);
  expect_reads(cache, *a);
  CHECK(a->table.get() != nullptr);
}

TEST_CASE("past the pin budget tables live in the LRU and open files stay within max_open",
          "[table_cache]") {
  Fixture fx;
  constexpr size_t kMaxOpen = 8;
  std::vector<std::shared_ptr<FileMetaData>> files;
  for (uint64_t n = 1; n <= 20; ++n) files.push_back(fx.add_table(n));
  TableCache cache(fx.storage.get(), nullptr, kMaxOpen);
  REQUIRE(cache.max_pinned() == 7);

  for (int round = 0; round < 3; ++round) {
    for (const auto& f : files) {
      expect_reads(cache, *f);
      CHECK(fx.open_now() <= static_cast<int>(kMaxOpen));
    }
  }
  CHECK(cache.pinned() == 7);
  CHECK(cache.size() == 1);
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK((files[i]->table.get() != nullptr) == (i < 7));
  }
  // The unpinned ones were reopened as they went round the one-table LRU.
  CHECK(fx.opens() > 20);

  {
    // An unpinned table in use is held by its Ref even when the LRU drops it.
    auto held = cache.get(*files[10]);
    REQUIRE(held.ok());
    CHECK(held->hold != nullptr);
    expect_reads(cache, *files[11]);  // evicts files[10] from the LRU
    Table::GetResult r;
    REQUIRE((*held)->get(key_of(11), 10, &r).ok());
    CHECK(r.found);
  }

  // When pinned metadata goes, its budget goes to the next table used.
  files[0].reset();
  files[1].reset();
  CHECK(cache.pinned() == 5);
  expect_reads(cache, *files[15]);
  expect_reads(cache, *files[16]);
  CHECK(cache.pinned() == 7);
  CHECK(files[15]->table.get() != nullptr);
  CHECK(files[16]->table.get() != nullptr);
  CHECK(fx.open_now() <= static_cast<int>(kMaxOpen));
}

TEST_CASE("a cache of one table pins nothing", "[table_cache]") {
  Fixture fx;
  auto a = fx.add_table(1);
  auto b = fx.add_table(2);
  TableCache cache(fx.storage.get(), nullptr, 1);
  CHECK(cache.max_pinned() == 0);
  for (int i = 0; i < 3; ++i) {
    expect_reads(cache, *a);
    expect_reads(cache, *b);
    CHECK(fx.open_now() <= 1);
  }
  CHECK(a->table.get() == nullptr);
  CHECK(b->table.get() == nullptr);
  CHECK(cache.pinned() == 0);
}

TEST_CASE("pinned tables keep reading after the cache is closed and destroyed", "[table_cache]") {
  Fixture fx;
  auto a = fx.add_table(1);
  auto b = fx.add_table(2);
  auto cache = std::make_unique<TableCache>(fx.storage.get(), nullptr, 16);
  expect_reads(*cache, *a);
  cache->close();
  expect_reads(*cache, *a);  // pinned: no storage needed
  auto closed = cache->get(*b);
  CHECK(closed.status().code() == Code::Closed);
  CHECK(b->table.get() == nullptr);
  cache.reset();
  Table::GetResult r;
  REQUIRE(a->table.get()->get(key_of(1), 10, &r).ok());
  CHECK(r.found);
  a.reset();
  CHECK(fx.open_now() == 0);
}

TEST_CASE("a missing table is corruption and pins nothing", "[table_cache]") {
  Fixture fx;
  FileMetaData f;
  f.number = 99;
  TableCache cache(fx.storage.get(), nullptr, 16);
  auto t = cache.get(f);
  CHECK(t.status().code() == Code::Corruption);
  CHECK(t.status().message().find(table_file_name(99)) != std::string::npos);
  CHECK(f.table.get() == nullptr);
  CHECK(cache.pinned() == 0);
}

#ifndef __EMSCRIPTEN__  // the wasm build has no threads
TEST_CASE("threads racing to open the same tables pin each one once", "[table_cache]") {
  Fixture fx;
  std::vector<std::shared_ptr<FileMetaData>> files;
  for (uint64_t n = 1; n <= 12; ++n) files.push_back(fx.add_table(n));
  TableCache cache(fx.storage.get(), nullptr, 16);  // 14 pins: all of them
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const auto& f = files[static_cast<size_t>(i + t) % files.size()];
        auto ref = cache.get(*f);
        Table::GetResult r;
        if (!ref.ok() || !(*ref)->get(key_of(f->number), 10, &r).ok() || !r.found ||
            r.value != "v" + std::to_string(f->number)) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(cache.pinned() == files.size());
  CHECK(cache.size() == 0);
  CHECK(fx.open_now() == static_cast<int>(files.size()));
  for (const auto& f : files) CHECK(f->table.get() != nullptr);
  files.clear();
  CHECK(fx.open_now() == 0);
}
#endif  // __EMSCRIPTEN__
