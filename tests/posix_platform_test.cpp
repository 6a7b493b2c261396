// skv-test-modules: util posix native
// skv-test-wasm: off
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "native/thread_pool_executor.h"
#include "platform/posix/posix_error.h"
#include "platform/posix/posix_platform.h"
#include "support/temp_dir.h"

using namespace skv;
using skv::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<PosixPlatform> make_platform() {
  return std::make_shared<PosixPlatform>(std::make_shared<ThreadPoolExecutor>(1));
}

std::unique_ptr<Storage> open_db(Platform& p, const std::string& path, bool create = true) {
  auto r = p.open_storage(path, StorageOptions{.create_if_missing = create, .marker = {}});
  INFO(r.status().to_string());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::string read_all(const LogFile& f) {
  std::string scratch(static_cast<size_t>(f.size()) + 16, '\0');
  std::string_view got;
  REQUIRE(f.read_at(0, scratch.size(), scratch.data(), &got).ok());
  return std::string(got);
}

std::vector<std::string> sorted(Result<std::vector<std::string>> r) {
  REQUIRE(r.ok());
  std::vector<std::string> v = std::move(r).value();
  std::sort(v.begin(), v.end());
  return v;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("open_storage creates the directory only when asked", "[posix]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("a/b/db");

  auto missing = p->open_storage(path, StorageOptions{.create_if_missing = false, .marker = {}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == Code::NotFound);
  CHECK(missing.status().message().find(path) != std::string::npos);
  CHECK_FALSE(file_exists(path));

  auto db = open_db(*p, path + "/");
  CHECK(db->location() == path);
  CHECK(fs::is_directory(path));
  CHECK(file_exists(path + "/LOCK"));

  auto empty = p->open_storage("", StorageOptions{});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().code() == Code::InvalidArgument);

  std::ofstream(tmp.sub("plain")) << "x";
  auto not_dir = p->open_storage(tmp.sub("plain"), StorageOptions{});
  REQUIRE_FALSE(not_dir.ok());
  CHECK(not_dir.status().code() == Code::IO);
}

TEST_CASE("the lock keeps a database to one Storage at a time", "[posix][lock]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("db");
  auto first = open_db(*p, path);

  SECTION("a second open in this process is Busy, even through another path or platform") {
    auto again = p->open_storage(path, StorageOptions{});
    REQUIRE_FALSE(again.ok());
    CHECK(again.status().code() == Code::Busy);
    CHECK(again.status().message().find("database is already open") != std::string::npos);
    CHECK(again.status().message().find(path) != std::string::npos);

    auto other = make_platform();
    auto via_dots = other->open_storage(tmp.path + "/./db/../db",
                                        StorageOptions{.create_if_missing = false, .marker = {}});
    REQUIRE_FALSE(via_dots.ok());
    CHECK(via_dots.status().code() == Code::Busy);

    first.reset();
    auto reopened = p->open_storage(path, StorageOptions{.create_if_missing = false, .marker = {}});
    INFO(reopened.status().to_string());
    CHECK(reopened.ok());
  }

  SECTION("a lock held by another process is Busy") {
    first.reset();
    int ready[2];
    int release[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(release) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Child: hold an fcntl write lock on LOCK until the parent says stop.
      int fd = ::open((path + "/LOCK").c_str(), O_RDWR);
      struct flock fl = {};
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      char c = (fd >= 0 && ::fcntl(fd, F_SETLK, &fl) == 0) ? 'y' : 'n';
      if (::write(ready[1], &c, 1) != 1) ::_exit(2);
      if (::read(release[0], &c, 1) != 1) ::_exit(3);
      ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    REQUIRE(c == 'y');
    auto blocked = p->open_storage(path, StorageOptions{.create_if_missing = false, .marker = {}});
    CHECK_FALSE(blocked.ok());
    CHECK(blocked.status().code() == Code::Busy);
    REQUIRE(::write(release[1], "x", 1) == 1);
    int wstatus = 0;
    REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
    CHECK(WIFEXITED(wstatus));
    for (int fd : {ready[0], ready[1], release[0], release[1]}) ::close(fd);
    // The failed attempt left nothing behind: the database opens once the other process is gone.
    auto after = p->open_storage(path, StorageOptions{.create_if_missing = false, .marker = {}});
    INFO(after.status().to_string());
    CHECK(after.ok());
  }
}

TEST_CASE("log files append, read, sync, truncate and close", "[posix][log]") {
  TempDir tmp;
  auto p = make_platform();
  auto db = open_db(*p, tmp.sub("db"));
  LogStore& logs = db->logs();

  auto created = logs.create("000001.wal");
  REQUIRE(created.ok());
  std::unique_ptr<LogFile> f = std::move(created).value();
  CHECK(f->name() == "000001.wal");
  CHECK(f->size() == 0);
  REQUIRE(f->append("hello ").ok());
  REQUIRE(f->append("world").ok());
  CHECK(f->size() == 11);
  REQUIRE(f->sync().ok());

  char scratch[32];
  std::string_view got;
  REQUIRE(f->read_at(6, 5, scratch, &got).ok());
  CHECK(got == "world");
  REQUIRE(f->read_at(8, 10, scratch, &got).ok());  // reaches the end: short
  CHECK(got == "rld");
  REQUIRE(f->read_at(11, 4, scratch, &got).ok());  // at the end: nothing
  CHECK(got.empty());
  REQUIRE(f->read_at(1000, 4, scratch, &got).ok());  // past the end: nothing
  CHECK(got.empty());

  SECTION("room ahead: zeros past the end, appends over them, reads and size end at the data") {
    const std::string path = tmp.sub("db/000001.wal");
    auto stored = [&] {
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    REQUIRE(f->reserve(4096).ok());
    CHECK(f->size() == 11);
    CHECK(fs::file_size(path) == 4096);
    REQUIRE(f->read_at(8, 100, scratch, &got).ok());  // ends at the last append, not the zeros
    CHECK(got == "rld");
    REQUIRE(f->read_at(11, 4, scratch, &got).ok());
    CHECK(got.empty());
    REQUIRE(f->append("!!").ok());  // over the zeros, not after them
    CHECK(f->size() == 13);
    CHECK(fs::file_size(path) == 4096);
    CHECK(read_all(*f) == "hello world!!");
    CHECK(stored() == "hello world!!" + std::string(4096 - 13, '\0'));
    REQUIRE(f->reserve(100).ok());  // already there: nothing changes
    CHECK(fs::file_size(path) == 4096);
    const std::string big(5000, 'b');  // past the reserved end: the file grows
    REQUIRE(f->append(big).ok());
    CHECK(f->size() == 5013);
    CHECK(fs::file_size(path) == 5013);
    REQUIRE(f->reserve(8192).ok());
    CHECK(fs::file_size(path) == 8192);
    // Cutting at size() drops the zeros; appends go on at the end.
    REQUIRE(f->truncate(f->size()).ok());
    CHECK(fs::file_size(path) == 5013);
    REQUIRE(f->append("?").ok());
    CHECK(read_all(*f) == "hello world!!" + big + "?");
    REQUIRE(f->sync().ok());
    // Whoever opens the file finds the zeros a reserve left after the last append.
    REQUIRE(f->reserve(6000).ok());
    REQUIRE(f->close().ok());
    auto opened = logs.open("000001.wal");
    REQUIRE(opened.ok());
    CHECK((*opened)->size() == 6000);
  }

  SECTION("room ahead in an empty file comes after its first append") {
    auto fresh = logs.create("000002.wal");
    REQUIRE(fresh.ok());
    REQUIRE((*fresh)->reserve(4096).ok());
    // Nothing yet: a reader that opens the file now finds no zeros where its header belongs.
    CHECK(fs::file_size(tmp.sub("db/000002.wal")) == 0);
    REQUIRE((*fresh)->append("head").ok());
    CHECK((*fresh)->size() == 4);
    CHECK(fs::file_size(tmp.sub("db/000002.wal")) == 4096);
    CHECK(read_all(**fresh) == "head");
  }

  SECTION("zeros that cannot be laid after an empty file's first append do not fail it") {
    // A file size limit makes the deferred zeros fail part way (EFBIG) once the record is in.
    struct rlimit before;
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction old_action;
    REQUIRE(::sigaction(SIGXFSZ, &ignore, &old_action) == 0);
    auto fresh = logs.create("000003.wal");
    REQUIRE(fresh.ok());
    REQUIRE((*fresh)->reserve(1 << 20).ok());
    struct rlimit small = before;
    small.rlim_cur = 8192;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    Status first = (*fresh)->append("head");
    Status second = (*fresh)->append("tail");
    const uintmax_t on_disk = fs::file_size(tmp.sub("db/000003.wal"));
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &before) == 0);
    REQUIRE(::sigaction(SIGXFSZ, &old_action, nullptr) == 0);
    INFO(first.to_string() << " / " << second.to_string());
    CHECK(first.ok());
    CHECK(second.ok());
    CHECK(on_disk == 8192);  // the zeros stopped at the limit
    CHECK((*fresh)->size() == 8);
    CHECK(read_all(**fresh) == "headtail");
  }

  SECTION("truncate cuts the tail; appends continue at the new end") {
    auto grow = f->truncate(12);
    CHECK(grow.code() == Code::InvalidArgument);
    REQUIRE(f->truncate(5).ok());
    CHECK(f->size() == 5);
    REQUIRE(f->append("!").ok());
    CHECK(read_all(*f) == "hello!");
    CHECK(fs::file_size(tmp.sub("db/000001.wal")) == 6);
  }

  SECTION("open appends at the end; create replaces") {
    REQUIRE(f->close().ok());
    REQUIRE(f->close().ok());  // idempotent
    CHECK(f->append("x").code() == Code::IO);
    CHECK(f->read_at(0, 1, scratch, &got).code() == Code::IO);

    auto opened = logs.open("000001.wal");
    REQUIRE(opened.ok());
    CHECK((*opened)->size() == 11);
    REQUIRE((*opened)->append("!").ok());
    CHECK(read_all(**opened) == "hello world!");

    auto replaced = logs.create("000001.wal");
    REQUIRE(replaced.ok());
    CHECK((*replaced)->size() == 0);
    CHECK(fs::file_size(tmp.sub("db/000001.wal")) == 0);
  }

  SECTION("open and remove of a missing file are NotFound; remove deletes") {
    auto missing = logs.open("000009.wal");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.status().code() == Code::NotFound);
    CHECK(missing.status().message().find(tmp.sub("db/000009.wal")) != std::string::npos);
    CHECK(logs.remove("000009.wal").code() == Code::NotFound);
    REQUIRE(logs.remove("000001.wal").ok());
    CHECK_FALSE(file_exists(tmp.sub("db/000001.wal")));
    // The open handle still reads the unlinked file.
    CHECK(read_all(*f) == "hello world");
  }

  SECTION("bytes survive closing the Storage") {
    f.reset();
    db.reset();
    db = open_db(*p, tmp.sub("db"), false);
    auto opened = db->logs().open("000001.wal");
    REQUIRE(opened.ok());
    CHECK(read_all(**opened) == "hello world");
  }
}

TEST_CASE("log reads run concurrently with appends", "[posix][log]") {
  TempDir tmp;
  auto p = make_platform();
  auto db = open_db(*p, tmp.sub("db"));
  auto f = std::move(db->logs().create("000002.wal")).value();
  const std::string block(1000, 'a');
  REQUIRE(f->append(block).ok());
  std::atomic<bool> bad{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      std::string scratch(1000, '\0');
      for (int i = 0; i < 200; ++i) {
        std::string_view got;
        if (!f->read_at(0, 1000, scratch.data(), &got).ok() || got != block) bad = true;
      }
    });
  }
  for (int i = 0; i < 200; ++i) REQUIRE(f->append(std::string(100, 'b')).ok());
  for (auto& t : readers) t.join();
  CHECK_FALSE(bad.load());
  CHECK(f->size() == 1000 + 200 * 100);
}

TEST_CASE("objects are written, finished, read and removed", "[posix][object]") {
  TempDir tmp;
  auto p = make_platform();
  auto db = open_db(*p, tmp.sub("db"));
  ObjectStore& objects = db->objects();

  auto w = std::move(objects.create("000005.sst")).value();
  std::string expected;
  for (int i = 0; i < 100; ++i) {  // small appends, buffered
    std::string piece = "piece-" + std::to_string(i) + ";";
    expected += piece;
    REQUIRE(w->append(piece).ok());
  }
  const std::string big(200 * 1024, 'z');  // larger than the buffer: written through
  expected += big;
  REQUIRE(w->append(big).ok());
  expected += "tail";
  REQUIRE(w->append("tail").ok());
  CHECK(w->size() == expected.size());

  // Not visible under its name, nor listed, before finish().
  CHECK(objects.open("000005.sst").status().code() == Code::NotFound);
  CHECK(sorted(objects.list()).empty());
  CHECK(file_exists(tmp.sub("db/000005.sst.partial")));

  REQUIRE(w->finish().ok());
  CHECK(w->append("more").code() == Code::InvalidArgument);
  CHECK_FALSE(file_exists(tmp.sub("db/000005.sst.partial")));
  CHECK(sorted(objects.list()) == std::vector<std::string>{"000005.sst"});

  auto r = std::move(objects.open("000005.sst")).value();
  CHECK(r->name() == "000005.sst");
  CHECK(r->size() == expected.size());
  std::string scratch(expected.size() + 10, '\0');
  std::string_view got;
  REQUIRE(r->read_at(0, scratch.size(), scratch.data(), &got).ok());
  CHECK(got == expected);
  REQUIRE(r->read_at(expected.size() - 2, 10, scratch.data(), &got).ok());
  CHECK(got == "il");
  REQUIRE(r->read_at(expected.size() + 5, 10, scratch.data(), &got).ok());
  CHECK(got.empty());

  // Concurrent positional reads.
  std::atomic<bool> bad{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      char buf[64];
      for (int i = 0; i < 300; ++i) {
        uint64_t off = static_cast<uint64_t>((i * 97 + t * 13) % expected.size());
        std::string_view v;
        if (!r->read_at(off, sizeof(buf), buf, &v).ok() ||
            v != std::string_view(expected).substr(off, sizeof(buf))) {
          bad = true;
        }
      }
    });
  }
  for (auto& t : readers) t.join();
  CHECK_FALSE(bad.load());

  auto dup = objects.create("000005.sst");
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.status().code() == Code::InvalidArgument);
  CHECK_FALSE(file_exists(tmp.sub("db/000005.sst.partial")));

  REQUIRE(objects.remove("000005.sst").ok());
  CHECK(objects.remove("000005.sst").code() == Code::NotFound);
  CHECK(objects.open("000005.sst").status().code() == Code::NotFound);
  // The reader opened before the removal keeps reading.
  REQUIRE(r->read_at(0, 5, scratch.data(), &got).ok());
  CHECK(got == "piece");
}

TEST_CASE("aborted and abandoned objects leave nothing", "[posix][object]") {
  TempDir tmp;
  auto p = make_platform();
  auto db = open_db(*p, tmp.sub("db"));
  ObjectStore& objects = db->objects();

  auto w = std::move(objects.create("000006.sst")).value();
  REQUIRE(w->append("data").ok());
  auto second = objects.create("000006.sst");  // a writer is active under that name
  CHECK(second.status().code() == Code::InvalidArgument);
  w->abort();
  w->abort();  // harmless
  CHECK(w->finish().code() == Code::InvalidArgument);
  CHECK_FALSE(file_exists(tmp.sub("db/000006.sst.partial")));
  CHECK_FALSE(file_exists(tmp.sub("db/000006.sst")));

  {
    auto dropped = std::move(objects.create("000007.sst")).value();
    REQUIRE(dropped->append("data").ok());
  }
  CHECK_FALSE(file_exists(tmp.sub("db/000007.sst.partial")));
  CHECK(objects.open("000007.sst").status().code() == Code::NotFound);

  // The name is free again after an abort.
  auto again = std::move(objects.create("000006.sst")).value();
  REQUIRE(again->finish().ok());
  CHECK(fs::file_size(tmp.sub("db/000006.sst")) == 0);
}

TEST_CASE("list follows the name rule - platform names are reserved", "[posix][list]") {
  TempDir tmp;
  auto p = make_platform();
  auto db = open_db(*p, tmp.sub("db"));
  for (const char* name : {"000001.wal", "MANIFEST-000002", "000004.tmp", "notes", "Manifest-1"}) {
    REQUIRE(db->logs().create(name).ok());
  }
  REQUIRE(std::move(db->objects().create("000003.sst")).value()->finish().ok());
  REQUIRE(db->write_pointer("CURRENT", "MANIFEST-000002\n").ok());
  auto pending = std::move(db->objects().create("000008.sst")).value();  // a partial file
  fs::create_directory(tmp.sub("db/000009"));                            // not a file

  CHECK(sorted(db->logs().list()) ==
        std::vector<std::string>{"000001.wal", "000004.tmp", "MANIFEST-000002"});
  CHECK(sorted(db->objects().list()) == std::vector<std::string>{"000003.sst"});

  for (const char* bad : {"", ".", "..", "a/b", "LOCK", "x.partial", "000001.sst.partial"}) {
    INFO(bad);
    CHECK(db->logs().create(bad).status().code() == Code::InvalidArgument);
    CHECK(db->objects().create(bad).status().code() == Code::InvalidArgument);
    CHECK(db->logs().remove(bad).code() == Code::InvalidArgument);
    CHECK(db->write_pointer(bad, "x").code() == Code::InvalidArgument);
  }
  CHECK(file_exists(tmp.sub("db/LOCK")));
}

TEST_CASE("pointers are replaced atomically and durably", "[posix][pointer]") {
  TempDir tmp;
  auto p = make_platform();
  auto db = open_db(*p, tmp.sub("db"));

  auto none = db->read_pointer("CURRENT");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == Code::NotFound);

  REQUIRE(db->write_pointer("CURRENT", "MANIFEST-000001\n").ok());
  CHECK(*db->read_pointer("CURRENT") == "MANIFEST-000001\n");
  struct stat before;
  REQUIRE(::stat(tmp.sub("db/CURRENT").c_str(), &before) == 0);

  // A reader holding the old file keeps the old contents: the new one arrives by rename, never by
  // rewriting the file in place.
  int old_fd = ::open(tmp.sub("db/CURRENT").c_str(), O_RDONLY);
  REQUIRE(old_fd >= 0);
  REQUIRE(db->write_pointer("CURRENT", "MANIFEST-000002 longer\n").ok());
  char buf[64];
  ssize_t n = ::pread(old_fd, buf, sizeof(buf), 0);
  ::close(old_fd);
  CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) == "MANIFEST-000001\n");
  struct stat after;
  REQUIRE(::stat(tmp.sub("db/CURRENT").c_str(), &after) == 0);
  CHECK(after.st_ino != before.st_ino);

  CHECK(*db->read_pointer("CURRENT") == "MANIFEST-000002 longer\n");
  CHECK_FALSE(file_exists(tmp.sub("db/CURRENT.partial")));
  REQUIRE(db->write_pointer("EMPTY", "").ok());
  CHECK(db->read_pointer("EMPTY")->empty());
  REQUIRE(db->sync_dir().ok());

  db.reset();
  db = open_db(*p, tmp.sub("db"), false);
  CHECK(*db->read_pointer("CURRENT") == "MANIFEST-000002 longer\n");
}

namespace {

// Forks a child that tries to lock `path`/LOCK the way another process would (a classic fcntl
// write lock, which conflicts with every kind of lock on the file; the child does not use the
// platform, whose in-process registry it would inherit from this process). Returns the child's
// exit code: 0 if the lock was held by someone, 1 if the child got it, 2 on anything else.
int open_in_child(const std::string& path) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int fd = ::open((path + "/LOCK").c_str(), O_RDWR);
    if (fd < 0) ::_exit(2);
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &fl) == 0) ::_exit(1);
    ::_exit(errno == EAGAIN || errno == EACCES ? 0 : 2);
  }
  int wstatus = 0;
  REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
  REQUIRE(WIFEXITED(wstatus));
  return WEXITSTATUS(wstatus);
}

}  // namespace

TEST_CASE("the lock belongs to the open database, not to the process", "[posix][lock]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("db");
  auto db = open_db(*p, path);
  CHECK(open_in_child(path) == 0);
  // Something else in the process opens LOCK and closes it again (a backup tool, a second
  // handle that failed): with a process-owned fcntl lock, that close would drop the lock.
  int fd = ::open((path + "/LOCK").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(open_in_child(path) == 0);  // still ours
  db.reset();
  CHECK(open_in_child(path) == 1);  // released with the Storage
}

TEST_CASE("one directory reached by two paths is one database", "[posix][lock]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("db");
  auto db = open_db(*p, path);
  // A symlink resolves to the same directory.
  fs::create_directory_symlink(path, tmp.sub("link"));
  auto via_link = p->open_storage(tmp.sub("link"), StorageOptions{});
  CHECK(via_link.status().code() == Code::Busy);
  // A bind mount gives the directory a second path that no name resolution joins: only its
  // identity (device and inode) and a lock owned by the open description catch it. Needs the
  // right to mount (root in CI); without it that part is reported and skipped.
  const std::string mount_point = tmp.sub("mnt");
  fs::create_directory(mount_point);
  if (::mount(path.c_str(), mount_point.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    WARN("bind mount not available here (" << std::strerror(errno) << "): second mount untested");
    return;
  }
  auto via_mount = p->open_storage(mount_point, StorageOptions{});
  CHECK(via_mount.status().code() == Code::Busy);
  CHECK(open_in_child(mount_point) == 0);
  db.reset();
  {
    auto second = p->open_storage(mount_point, StorageOptions{});
    INFO(second.status().to_string());
    CHECK(second.ok());
    CHECK(open_in_child(path) == 0);  // held through the other path
  }
  CHECK(::umount2(mount_point.c_str(), MNT_DETACH) == 0);
}

TEST_CASE("partial files of a crashed holder are removed at the next open", "[posix]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("db");
  const StorageOptions existing{.create_if_missing = false, .marker = "CURRENT"};
  {
    auto db = open_db(*p, path);
    REQUIRE(db->write_pointer("CURRENT", "MANIFEST-000001\n").ok());
  }
  std::ofstream(path + "/000011.sst.partial") << "half a table";
  std::ofstream(path + "/CURRENT.partial") << "MANIF";
  std::ofstream(path + "/000012.tmp") << "the core's own temporary file";
  // Not names the platform writes partial files for: a user's, and lookalikes.
  const std::vector<std::string> foreign = {"video.mp4.partial", "notes.partial", "12x.sst.partial",
                                            ".sst.partial", "MANIFEST-000001.partial"};
  for (const auto& name : foreign) std::ofstream(path + "/" + name) << "not skv's";
  auto opened = p->open_storage(path, existing);
  REQUIRE(opened.ok());
  std::unique_ptr<Storage> db = std::move(opened).value();
  CHECK_FALSE(file_exists(path + "/000011.sst.partial"));
  CHECK_FALSE(file_exists(path + "/CURRENT.partial"));
  CHECK(file_exists(path + "/000012.tmp"));
  for (const auto& name : foreign) {
    INFO(name);
    CHECK(file_exists(path + "/" + name));
  }
  // The table number is usable again.
  auto w = db->objects().create("000011.sst");
  REQUIRE(w.ok());
  REQUIRE((*w)->finish().ok());
}

TEST_CASE("partial files are left alone until the directory is known to be a database", "[posix]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("db");
  fs::create_directories(path);
  std::ofstream(path + "/000011.sst.partial") << "whose is this?";
  // No CURRENT: a directory being made a database, or someone else's. Nothing is removed.
  auto db = p->open_storage(path, StorageOptions{.create_if_missing = true, .marker = "CURRENT"});
  REQUIRE(db.ok());
  CHECK(file_exists(path + "/000011.sst.partial"));
}

TEST_CASE("without create_if_missing a directory that is not a database is refused untouched",
          "[posix]") {
  TempDir tmp;
  auto p = make_platform();
  const std::string path = tmp.sub("folder");
  fs::create_directories(path);
  std::ofstream(path + "/notes.txt") << "mine";
  std::ofstream(path + "/000011.sst.partial") << "mine too";
  auto listing = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> before = listing();
  auto r = p->open_storage(path, StorageOptions{.create_if_missing = false, .marker = "CURRENT"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::NotFound);
  CHECK(r.status().message().find(path) != std::string::npos);
  CHECK(r.status().message().find("not an skv database") != std::string::npos);
  CHECK(listing() == before);  // no LOCK, nothing removed
}

TEST_CASE("errno maps to codes - messages name the file", "[posix][error]") {
  CHECK(posix_error_code(ENOSPC) == Code::Quota);
  CHECK(posix_error_code(EDQUOT) == Code::Quota);
  CHECK(posix_error_code(ENOENT) == Code::NotFound);
  CHECK(posix_error_code(EIO) == Code::IO);
  CHECK(posix_error_code(EACCES) == Code::IO);
  Status s = posix_error("data/db/000001.wal", "append", ENOSPC);
  CHECK(s.code() == Code::Quota);
  CHECK(s.message().rfind("data/db/000001.wal: append: ", 0) == 0);
  CHECK(s.message().size() > std::string("data/db/000001.wal: append: ").size());
}

TEST_CASE("the clock reads wall time in nanoseconds", "[posix][clock]") {
  PosixClock clock;
  uint64_t a = clock.now_nanos();
  uint64_t secs = static_cast<uint64_t>(std::time(nullptr));
  uint64_t b = clock.now_nanos();
  CHECK(b >= a);
  CHECK(a / 1'000'000'000ull + 2 >= secs);
  CHECK(a / 1'000'000'000ull <= secs + 2);
  auto p = make_platform();
  CHECK(p->clock().now_nanos() >= a);
}

TEST_CASE("default_platform is shared while held and runs work on threads", "[posix][native]") {
  std::shared_ptr<Platform> a = default_platform();
  std::shared_ptr<Platform> b = default_platform();
  REQUIRE(a != nullptr);
  CHECK(a.get() == b.get());
  CHECK(dynamic_cast<PosixPlatform*>(a.get()) != nullptr);
  CHECK(a->executor().concurrent());
  CHECK(a->executor().run_pending(10) == 0);

  std::atomic<bool> ran{false};
  a->executor().schedule([&] { ran = true; });
  for (int i = 0; i < 2000 && !ran; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(ran.load());

  TempDir tmp;
  auto db = a->open_storage(tmp.sub("db"), StorageOptions{});
  REQUIRE(db.ok());
  CHECK(b->open_storage(tmp.sub("db"), StorageOptions{}).status().code() == Code::Busy);
}

namespace {

// The "VmFlags:" line of the /proc/self/smaps entry that holds `addr`; "" when no mapping holds
// it; "?" where there is no /proc/self/smaps.
std::string vm_flags_of(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return "?";
  const auto a = reinterpret_cast<uintptr_t>(addr);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2) {
      inside = a >= lo && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool has_flag(const std::string& vm_flags, const std::string& flag) {
  return (vm_flags + " ").find(" " + flag + " ") != std::string::npos;
}

}  // namespace

TEST_CASE("memtable blocks of whole huge pages are aligned mappings advised for huge pages",
          "[posix][memory]") {
  auto platform = make_platform();
  std::shared_ptr<MemoryBlocks> blocks = platform->memory_blocks();
  REQUIRE(blocks != nullptr);
  CHECK(blocks.get() == platform->memory_blocks().get());
  const size_t huge = PosixMemoryBlocks::kHugePageSize;
  CHECK(blocks->preferred_block_size() == huge);

  std::vector<char*> mapped;
  for (size_t pages : {1, 2, 1, 3}) {
    char* b = blocks->allocate(pages * huge);
    REQUIRE(b != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(b) % huge == 0);
    std::memset(b, static_cast<int>(pages), pages * huge);  // every byte is writable
    CHECK(b[pages * huge - 1] == static_cast<char>(pages));
    const std::string flags = vm_flags_of(b);
    INFO(flags);
    CHECK(!flags.empty());
#ifdef __linux__
    // The kernel records the advice on the mapping wherever it has transparent huge pages.
    if (file_exists("/sys/kernel/mm/transparent_hugepage/enabled")) CHECK(has_flag(flags, "hg"));
#endif
    mapped.push_back(b);
  }
  // Other sizes come from the heap and are aligned as operator new aligns.
  char* small = blocks->allocate(4096 + 8);
  CHECK(reinterpret_cast<uintptr_t>(small) % alignof(std::max_align_t) == 0);
  std::memset(small, 1, 4096 + 8);
  blocks->release(small, 4096 + 8);

  const size_t sizes[] = {1, 2, 1, 3};
  for (size_t i = 0; i < mapped.size(); ++i) blocks->release(mapped[i], sizes[i] * huge);
#ifdef __linux__
  // Released blocks are unmapped at once (nothing in this test maps memory meanwhile).
  for (char* b : mapped) CHECK(vm_flags_of(b).empty());
#endif
}
