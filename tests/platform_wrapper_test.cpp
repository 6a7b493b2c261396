// skv-test-modules: util memory
// The forwarding base classes of skv/platform_wrapper.h over the in-memory platform: every call
// reaches the target unchanged (results and errors), and the hooks see each storage, file, writer
// and reader the wrapper hands out, with the name asked for, and never a failed result.

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "platform/memory/memory_platform.h"
#include "skv/platform_wrapper.h"

using namespace skv;

namespace {

// What the hooks saw, in order: "storage mem:db", "log 000001.wal", "writer 000002.sst", ...
struct Seen {
  std::mutex mu;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard<std::mutex> l(mu);
    events.push_back(std::move(e));
  }
};

// Counts appends of the files it wraps, to show the wrapped objects are the ones in use.
class CountingLogFile final : public LogFileWrapper {
 public:
  CountingLogFile(std::unique_ptr<LogFile> f, int* appends)
      : LogFileWrapper(std::move(f)), appends_(appends) {}
  Status append(std::string_view data) override {
    ++*appends_;
    return LogFileWrapper::append(data);
  }

 private:
  int* appends_;
};

class SeeingLogStore final : public LogStoreWrapper {
 public:
  SeeingLogStore(LogStore* s, Seen* seen, int* appends)
      : LogStoreWrapper(s), seen_(seen), appends_(appends) {}

 protected:
  std::unique_ptr<LogFile> wrap_file(const std::string& name, std::unique_ptr<LogFile> f) override {
    seen_->add("log " + name);
    return std::make_unique<CountingLogFile>(std::move(f), appends_);
  }

 private:
  Seen* seen_;
  int* appends_;
};

class SeeingObjectStore final : public ObjectStoreWrapper {
 public:
  SeeingObjectStore(ObjectStore* s, Seen* seen) : ObjectStoreWrapper(s), seen_(seen) {}

 protected:
  std::unique_ptr<ObjectWriter> wrap_writer(const std::string& name,
                                            std::unique_ptr<ObjectWriter> w) override {
    seen_->add("writer " + name);
    return std::make_unique<ObjectWriterWrapper>(std::move(w));
  }
  std::unique_ptr<ObjectReader> wrap_reader(const std::string& name,
                                            std::unique_ptr<ObjectReader> r) override {
    seen_->add("reader " + name);
    return std::make_unique<ObjectReaderWrapper>(std::move(r));
  }

 private:
  Seen* seen_;
};

class SeeingStorage final : public StorageWrapper {
 public:
  SeeingStorage(std::unique_ptr<Storage> s, Seen* seen, int* appends)
      : StorageWrapper(std::move(s)),
        logs_(&target().logs(), seen, appends),
        objects_(&target().objects(), seen) {}
  LogStore& logs() override { return logs_; }
  ObjectStore& objects() override { return objects_; }

 private:
  SeeingLogStore logs_;
  SeeingObjectStore objects_;
};

class SeeingPlatform final : public PlatformWrapper {
 public:
  explicit SeeingPlatform(std::shared_ptr<Platform> target) : PlatformWrapper(std::move(target)) {}
  Seen seen;
  int appends = 0;

 protected:
  std::unique_ptr<Storage> wrap_storage(std::unique_ptr<Storage> s) override {
    seen.add("storage " + s->location());
    return std::make_unique<SeeingStorage>(std::move(s), &seen, &appends);
  }
};

}  // namespace

TEST_CASE("the base classes forward every call, results and errors", "[wrapper]") {
  auto memory = std::make_shared<MemoryPlatform>();
  PlatformWrapper p(memory);  // no hook overridden: a pure forwarder
  auto r = p.open_storage("db", StorageOptions{});
  REQUIRE(r.ok());
  StorageWrapper s(std::move(*r));
  LogStoreWrapper logs(&s.logs());
  ObjectStoreWrapper objects(&s.objects());
  CHECK(s.location() == "mem:db");

  auto created = logs.create("000001.wal");
  REQUIRE(created.ok());
  LogFileWrapper f(std::move(*created));
  CHECK(f.name() == "000001.wal");
  REQUIRE(f.append("hello world").ok());
  CHECK(f.size() == 11);
  REQUIRE(f.sync().ok());
  REQUIRE(f.truncate(5).ok());
  char scratch[16];
  std::string_view got;
  REQUIRE(f.read_at(0, sizeof(scratch), scratch, &got).ok());
  CHECK(got == "hello");
  CHECK(*memory->read_file("db", "000001.wal") == "hello");

  auto w = objects.create("000002.sst");
  REQUIRE(w.ok());
  ObjectWriterWrapper writer(std::move(*w));
  REQUIRE(writer.append("table").ok());
  CHECK(writer.size() == 5);
  REQUIRE(writer.finish().ok());
  auto opened = objects.open("000002.sst");
  REQUIRE(opened.ok());
  ObjectReaderWrapper reader(std::move(*opened));
  CHECK(reader.name() == "000002.sst");
  CHECK(reader.size() == 5);
  REQUIRE(reader.read_at(1, 3, scratch, &got).ok());
  CHECK(got == "abl");

  auto aborted = objects.create("000003.sst");
  REQUIRE(aborted.ok());
  ObjectWriterWrapper abandoned(std::move(*aborted));
  abandoned.abort();
  CHECK(memory->read_file("db", "000003.sst").status().code() == Code::NotFound);

  REQUIRE(s.write_pointer("CURRENT", "MANIFEST-000004\n").ok());
  CHECK(*s.read_pointer("CURRENT") == "MANIFEST-000004\n");
  REQUIRE(s.sync_dir().ok());
  CHECK(*logs.list() == std::vector<std::string>{"000001.wal"});
  CHECK(*objects.list() == std::vector<std::string>{"000002.sst"});
  REQUIRE(logs.remove("000001.wal").ok());
  REQUIRE(objects.remove("000002.sst").ok());
  REQUIRE(f.close().ok());

  // The target's errors come back as they are.
  CHECK(logs.open("missing.wal").status().code() == Code::NotFound);
  CHECK(objects.open("missing.sst").status().code() == Code::NotFound);
  CHECK(logs.remove("000001.wal").code() == Code::NotFound);
  CHECK(s.read_pointer("NONE").status().code() == Code::NotFound);
  CHECK(p.open_storage("db", StorageOptions{}).status().code() == Code::Busy);
  CHECK(&p.clock() == &memory->clock());
  CHECK(&p.executor() == &memory->executor());
  CHECK(&p.target() == memory.get());
}

TEST_CASE("the hooks see what the wrappers hand out, never a failure", "[wrapper]") {
  auto p = std::make_shared<SeeingPlatform>(std::make_shared<MemoryPlatform>());
  auto r = p->open_storage("db", StorageOptions{});
  REQUIRE(r.ok());
  Storage& s = **r;
  CHECK(p->open_storage("db", StorageOptions{}).status().code() == Code::Busy);
  CHECK(p->open_storage("none", StorageOptions{.create_if_missing = false, .marker = {}})
            .status()
            .code() == Code::NotFound);

  auto f = s.logs().create("000001.wal");
  REQUIRE(f.ok());
  REQUIRE((*f)->append("a").ok());
  REQUIRE((*f)->append("b").ok());
  CHECK(s.logs().open("000009.wal").status().code() == Code::NotFound);
  auto again = s.logs().open("000001.wal");
  REQUIRE(again.ok());
  REQUIRE((*again)->append("c").ok());
  CHECK(p->appends == 3);

  auto w = s.objects().create("000002.sst");
  REQUIRE(w.ok());
  REQUIRE((*w)->append("x").ok());
  REQUIRE((*w)->finish().ok());
  CHECK(s.objects().create("000002.sst").status().code() == Code::InvalidArgument);
  REQUIRE(s.objects().open("000002.sst").ok());

  CHECK(p->seen.events == std::vector<std::string>{"storage mem:db", "log 000001.wal",
                                                   "log 000001.wal", "writer 000002.sst",
                                                   "reader 000002.sst"});
}
