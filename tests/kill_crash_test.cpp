// skv-test-modules: util wal memtable sstable version engine posix native
// skv-test-wasm: off
// skv-test-label: crash
// Real crashes: a child process writes to a tree on disk and is killed with SIGKILL at a random
// moment; the parent then reopens the tree and checks that every commit the child saw
// acknowledged as Immediate is there (and, since a kill keeps what reached the kernel, every
// acknowledged Eventual one too), that the visible commits are a prefix of the child's commit
// order, and that the tree takes writes again. Fifty rounds run against one directory, each
// continuing the history left by the one before, so recovery after a crashed recovery is covered
// too (some kills land while the child is still opening the tree).
//
// The child is this test binary again: the parent forks and at once execs /proc/self/exe, asking
// Catch2 for the hidden test case "kill crash child writer", with its parameters in the
// environment. A fresh process means no thread, lock or platform of the parent leaks into the
// child, however many the parent holds. The child reports on a pipe with fixed-size records
// (16 bytes, under PIPE_BUF, so a kill never tears one): "ready" after the tree opened, the id of
// each commit after commit().wait() returned OK, and its flush and compaction counts.
//
// Commit i writes "commit/<i>" (a value derived from i), sets "last" to i and sets or deletes one
// of forty "b/" keys, all derived from i, so the expected contents after commits 0..n-1 are a
// function of n (apply_commit), whatever the durability each commit had.
//
// Seed: SKV_KILL_SEED in the environment overrides the default; it decides the kill delays and
// the child's durability mix. Kill timing is real time, so a seed replays the schedule, not the
// exact interleaving.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/tree_fixture.h"
#include "util/status_macros.h"

extern char** environ;

using namespace skv;
using namespace skv::testing;

namespace {

constexpr int kRounds = 50;
constexpr uint64_t kDefaultSeed = 0x6b696c6c;  // "kill"
constexpr const char* kChildTestName = "kill crash child writer";

// --- The commit history, a function of the commit id. --------------------------------------

std::string commit_key(uint64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "commit/%08" PRIu64, id);
  return buf;
}

std::string commit_value(uint64_t id) {
  const uint64_t h = mix64(id);
  std::string v = "v" + std::to_string(id) + ":";
  // Mostly small values, one in ten of a few KiB so memtables fill in tens of commits.
  const size_t n = (h >> 40) % 10 == 0 ? 2000 + h % 4000 : h % 300;
  v.append(n, static_cast<char>('a' + id % 26));
  return v;
}

// The "b/" key commit `id` touches, and whether it deletes it (else it sets it to the id).
std::string bucket_key(uint64_t id) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "b/%02u", static_cast<unsigned>((mix64(id) >> 16) % 40));
  return buf;
}
bool bucket_deletes(uint64_t id) { return ((mix64(id) >> 32) & 7) == 0; }

Status write_commit(Transaction& tx, uint64_t id) {
  SKV_RETURN_IF_ERROR(tx.set(commit_key(id), commit_value(id)));
  SKV_RETURN_IF_ERROR(tx.set("last", std::to_string(id)));
  if (bucket_deletes(id)) return tx.del(bucket_key(id));
  return tx.set(bucket_key(id), std::to_string(id));
}

void apply_commit(Model* m, uint64_t id) {
  (*m)[commit_key(id)] = commit_value(id);
  (*m)["last"] = std::to_string(id);
  if (bucket_deletes(id)) {
    m->erase(bucket_key(id));
  } else {
    (*m)[bucket_key(id)] = std::to_string(id);
  }
}

// Both processes open the tree with these options, small enough that a few hundred milliseconds
// of commits flush and compact. Each round picks the child's memtable size: 16 KiB is below the
// memtable arena's first block, so every commit freezes the memtable and is flushed alone; with
// 48 KiB a memtable holds tens of commits.
// With `value_log`, the tree is also versioned and separates values of 128 bytes or more into
// value logs small enough to roll over, with garbage collected early (docs/vlog.md).
TreeBuilder builder(const std::string& dir, size_t memtable_size, bool value_log) {
  // A null platform: build() takes default_platform(), the POSIX one with a thread pool.
  TreeBuilder b = small_tree(nullptr, dir);
  b.with_memtable_size(memtable_size);
  if (value_log) {
    b.with_versioning(true, 1'000'000)  // one millisecond of history
        .with_enable_vlog(true)
        .with_vlog_value_threshold(128)
        .with_vlog_max_file_size(64 * 1024)
        .with_vlog_gc_ratio(0.3);
  }
  return b;
}

// --- The pipe protocol. -----------------------------------------------------------------------

enum RecordKind : uint32_t {
  kReady = 1,      // the tree opened; id = the first id the child will commit
  kImmediate = 2,  // commit `id` (Durability::Immediate) returned OK
  kEventual = 3,   // commit `id` (Durability::Eventual) returned OK
  kStats = 4,      // id = flushes << 32 | compactions since the child opened the tree
};

struct Record {
  uint32_t kind;
  uint32_t reserved;
  uint64_t id;
};
static_assert(sizeof(Record) == 16);

// --- The child. --------------------------------------------------------------------------------

[[noreturn]] void child_fail(const char* what, const Status& s) {
  std::fprintf(stderr, "kill_crash child: %s: %s\n", what, s.to_string().c_str());
  std::fflush(stderr);
  _exit(3);
}

void child_send(int fd, uint32_t kind, uint64_t id) {
  Record r{kind, 0, id};
  const char* p = reinterpret_cast<const char*>(&r);
  size_t left = sizeof(r);
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(4);  // the parent is gone
    p += w;
    left -= static_cast<size_t>(w);
  }
}

// Opens the tree, checks it continues where the parent said, then commits until killed.
[[noreturn]] void run_child(const std::string& dir, int fd, uint64_t start, uint64_t seed,
                            size_t memtable_size, bool value_log) {
  Result<Tree> opened = builder(dir, memtable_size, value_log).build();
  if (!opened.ok()) child_fail("open", opened.status());
  Tree tree = std::move(opened).value();
  {
    Result<Transaction> tx = tree.begin_with_mode(Mode::ReadOnly);
    if (!tx.ok()) child_fail("begin", tx.status());
    Result<std::optional<std::string>> last = tx->get("last");
    if (!last.ok()) child_fail("get last", last.status());
    const std::string want = start == 0 ? "" : std::to_string(start - 1);
    if (last->value_or("") != want) {
      child_fail("history", Status::corruption("last is '" + last->value_or("") + "', expected '" +
                                               want + "'"));
    }
  }
  child_send(fd, kReady, start);
  Rng rng(seed);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (uint64_t id = start;; ++id) {
    Result<Transaction> tx = tree.begin();
    if (!tx.ok()) child_fail("begin", tx.status());
    Status s = write_commit(*tx, id);
    if (!s.ok()) child_fail("write", s);
    const bool immediate = !rng.one_in(4);
    tx->set_durability(immediate ? Durability::Immediate : Durability::Eventual);
    s = tx->commit().wait();
    if (!s.ok()) child_fail("commit", s);
    child_send(fd, immediate ? kImmediate : kEventual, id);
    if (id % 32 == 0) {
      TreeStats st = tree.stats();
      child_send(fd, kStats, st.flushes << 32 | (st.compactions & 0xffffffffu));
    }
    if (std::chrono::steady_clock::now() > give_up) {
      std::fprintf(stderr, "kill_crash child: never killed\n");
      _exit(5);
    }
  }
}

uint64_t env_u64(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? 0 : std::strtoull(v, nullptr, 10);
}

// --- The parent. -------------------------------------------------------------------------------

struct Child {
  pid_t pid = -1;
  int fd = -1;  // read end of the pipe
  std::string pending;
  std::vector<Record> records;
  bool eof = false;
};

// Kills and reaps the child, and closes the pipe, if a round ends early (a failed REQUIRE
// throws), so no writer outlives the test.
struct Reaper {
  Child* c;
  ~Reaper() {
    if (c->fd >= 0) ::close(c->fd);
    if (c->pid > 0) {
      ::kill(c->pid, SIGKILL);
      ::waitpid(c->pid, nullptr, 0);
    }
  }
};

// Forks and execs this binary as the child. Everything the child needs is prepared before fork,
// so the forked process only calls async-signal-safe functions before exec.
Child spawn_child(const std::string& dir, uint64_t start, uint64_t seed, size_t memtable_size,
                  bool value_log) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "SKV_KILL_CHILD_", 15) != 0) env_strings.emplace_back(*e);
  }
  env_strings.push_back("SKV_KILL_CHILD_DIR=" + dir);
  env_strings.push_back("SKV_KILL_CHILD_FD=" + std::to_string(fds[1]));
  env_strings.push_back("SKV_KILL_CHILD_START=" + std::to_string(start));
  env_strings.push_back("SKV_KILL_CHILD_SEED=" + std::to_string(seed));
  env_strings.push_back("SKV_KILL_CHILD_MEMTABLE=" + std::to_string(memtable_size));
  env_strings.push_back("SKV_KILL_CHILD_VLOG=" + std::to_string(value_log ? 1 : 0));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string name = kChildTestName;
  std::vector<char*> argv = {exe.data(), name.data(), nullptr};

  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::fcntl(fds[1], F_SETFD, 0);  // the write end survives exec
    ::execve(exe.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  ::close(fds[1]);
  Child c;
  c.pid = pid;
  c.fd = fds[0];
  return c;
}

// Reads what the child sent, waiting up to `timeout_ms` for something to arrive (0: no wait,
// negative: until data or end of file).
void pump(Child* c, int timeout_ms) {
  if (c->eof) return;
  pollfd p{c->fd, POLLIN, 0};
  int r = ::poll(&p, 1, timeout_ms);
  if (r < 0 && errno == EINTR) return;
  REQUIRE(r >= 0);
  if (r == 0) return;
  char buf[4096];
  ssize_t n = ::read(c->fd, buf, sizeof(buf));
  if (n < 0 && errno == EINTR) return;
  REQUIRE(n >= 0);
  if (n == 0) {
    c->eof = true;
    return;
  }
  c->pending.append(buf, static_cast<size_t>(n));
  size_t used = 0;
  while (c->pending.size() - used >= sizeof(Record)) {
    Record rec;
    std::memcpy(&rec, c->pending.data() + used, sizeof(rec));
    c->records.push_back(rec);
    used += sizeof(Record);
  }
  c->pending.erase(0, used);
}

bool has_ready(const Child& c) {
  for (const Record& r : c.records) {
    if (r.kind == kReady) return true;
  }
  return false;
}

using SteadyClock = std::chrono::steady_clock;

int ms_left(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

using Entries = std::vector<std::pair<std::string, std::string>>;

// Reads the whole tree through one iterator, forward or backward.
Entries scan(const Tree& tree, bool forward) {
  Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
  Result<Iterator> it = tx.range("", "");
  REQUIRE(it.ok());
  Entries out;
  for (forward ? it->seek_first() : it->seek_last(); it->valid();
       forward ? it->next() : it->prev()) {
    Result<std::string_view> v = it->value();
    require_ok(v.status());
    out.emplace_back(std::string(it->key()), std::string(*v));
  }
  require_ok(it->status());
  if (!forward) std::reverse(out.begin(), out.end());
  return out;
}

// Where two sorted listings first differ, or "" if they are equal.
std::string first_difference(const Entries& got, const Model& want) {
  auto w = want.begin();
  for (size_t i = 0; i < got.size(); ++i, ++w) {
    if (w == want.end()) return "extra key " + got[i].first;
    if (got[i].first != w->first) return "key " + got[i].first + " where " + w->first + " belongs";
    if (got[i].second != w->second) return "wrong value for " + w->first;
  }
  if (w != want.end()) return "missing key " + w->first;
  return "";
}

void check_scans(const Tree& tree, const Model& want) {
  CHECK(first_difference(scan(tree, true), want) == "");
  CHECK(first_difference(scan(tree, false), want) == "");
}

}  // namespace

TEST_CASE(kChildTestName, "[.][kill_crash_child]") {
  const char* dir = std::getenv("SKV_KILL_CHILD_DIR");
  INFO("run by the SIGKILL test only: it sets SKV_KILL_CHILD_* and kills this process");
  REQUIRE(dir != nullptr);
  run_child(dir, static_cast<int>(env_u64("SKV_KILL_CHILD_FD")), env_u64("SKV_KILL_CHILD_START"),
            env_u64("SKV_KILL_CHILD_SEED"), env_u64("SKV_KILL_CHILD_MEMTABLE"),
            env_u64("SKV_KILL_CHILD_VLOG") != 0);
}

namespace {

// The parent's loop: kRounds children, each killed, each followed by a reopen that checks what
// survived and commits once more.
void run_kill_rounds(bool value_log) {
  const uint64_t seed =
      std::getenv("SKV_KILL_SEED") != nullptr ? env_u64("SKV_KILL_SEED") : kDefaultSeed;
  char tmpl[] = "/tmp/skv-kill-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = std::string(tmpl) + "/db";
  INFO("seed " << seed << " (set SKV_KILL_SEED to replay), directory " << dir);

  Rng rng(seed);
  Model model;  // the expected contents after commits 0..model_n-1
  uint64_t model_n = 0;
  uint64_t start = 0;  // the first id the next child commits
  int rounds_with_acks = 0, early_kills = 0;
  uint64_t flushes = 0, compactions = 0, acked = 0, vlog_files_seen = 0;
  const auto t0 = SteadyClock::now();

  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round << ", child starts at commit " << start);
    // One kill in six lands early, likely while the child is still opening (and recovering)
    // the tree; the others some time after it reported ready.
    const bool early = rng.one_in(6);
    const int delay_ms =
        early ? static_cast<int>(rng.uniform(25)) : 2 + static_cast<int>(rng.uniform(250));
    INFO("kill " << (early ? "after spawn" : "after ready") << " + " << delay_ms << " ms");
    const size_t memtable_size = rng.one_in(2) ? 16 * 1024 : 48 * 1024;
    INFO("child memtable size " << memtable_size);
    Child c = spawn_child(dir, start, rng.next(), memtable_size, value_log);
    Reaper reaper{&c};
    if (!early) {
      const auto ready_deadline = SteadyClock::now() + std::chrono::seconds(20);
      while (!has_ready(c) && !c.eof && SteadyClock::now() < ready_deadline) {
        pump(&c, ms_left(ready_deadline));
      }
      INFO("the child did not report ready (see its stderr above)");
      REQUIRE(has_ready(c));
    } else {
      ++early_kills;
    }
    const auto kill_at = SteadyClock::now() + std::chrono::milliseconds(delay_ms);
    while (!c.eof && SteadyClock::now() < kill_at) pump(&c, ms_left(kill_at));
    REQUIRE(::kill(c.pid, SIGKILL) == 0);
    while (!c.eof) pump(&c, -1);
    ::close(c.fd);
    c.fd = -1;
    int wstatus = 0;
    REQUIRE(::waitpid(c.pid, &wstatus, 0) == c.pid);
    c.pid = -1;
    INFO("child wait status " << wstatus << " (exit code " << WEXITSTATUS(wstatus) << ")");
    REQUIRE(WIFSIGNALED(wstatus));
    REQUIRE(WTERMSIG(wstatus) == SIGKILL);
    REQUIRE(c.pending.empty());  // records are never torn

    std::optional<uint64_t> max_immediate, max_acked;
    for (const Record& r : c.records) {
      if (r.kind == kImmediate || r.kind == kEventual) {
        REQUIRE(r.id == (max_acked ? *max_acked + 1 : start));  // one commit at a time, in order
        max_acked = r.id;
        ++acked;
        if (r.kind == kImmediate) max_immediate = r.id;
      }
    }
    {
      // Counts restart with each child: add each round's largest.
      uint64_t round_flushes = 0, round_compactions = 0;
      for (const Record& r : c.records) {
        if (r.kind != kStats) continue;
        round_flushes = std::max(round_flushes, r.id >> 32);
        round_compactions = std::max(round_compactions, r.id & 0xffffffffu);
      }
      flushes += round_flushes;
      compactions += round_compactions;
    }
    if (max_acked) ++rounds_with_acks;

    // Reopen in this process and check what survived.
    Tree tree = open_or_fail(builder(dir, 48 * 1024, value_log));
    uint64_t n = 0;
    {
      Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
      std::optional<std::string> last = get_or_fail(tx, "last");
      if (last) n = std::stoull(*last) + 1;
    }
    INFO("visible commits: 0.." << (n == 0 ? 0 : n - 1) << ", last acknowledged: "
                                << (max_acked ? std::to_string(*max_acked) : "none")
                                << ", last Immediate: "
                                << (max_immediate ? std::to_string(*max_immediate) : "none"));
    REQUIRE(n >= start);  // what the previous round verified (and wrote, durably) survives
    if (max_immediate) REQUIRE(n > *max_immediate);
    // A killed process loses nothing that reached the kernel, and an Eventual commit is written
    // to the WAL (not synced) before it completes: so with SIGKILL, unlike a power failure,
    // every acknowledged commit survives, Eventual ones too.
    if (max_acked) REQUIRE(n > *max_acked);
    // Never a commit the child did not get to send: at most the one it was committing.
    REQUIRE(n <= (max_acked ? *max_acked + 1 : start) + 1);
    while (model_n < n) apply_commit(&model, model_n++);
    // Prefix: the scans match the state after exactly commits 0..n-1 (every earlier commit/<i>
    // present, no later one, "last" and the "b/" keys as those commits left them).
    check_scans(tree, model);
    {
      Transaction tx = begin_or_fail(tree, Mode::ReadOnly);
      for (uint64_t id = start; id < n; ++id) {
        INFO("commit " << id);
        REQUIRE(get_or_fail(tx, commit_key(id)) == commit_value(id));
      }
      for (uint64_t id = n; id < n + 3; ++id) REQUIRE_FALSE(get_or_fail(tx, commit_key(id)));
      for (int b = 0; b < 40; ++b) {
        char key[16];
        std::snprintf(key, sizeof(key), "b/%02d", b);
        auto it = model.find(key);
        std::optional<std::string> want;
        if (it != model.end()) want = it->second;
        REQUIRE(get_or_fail(tx, key) == want);
      }
    }
    // Writable: this process commits the next id itself, durably.
    {
      Transaction tx = begin_or_fail(tree);
      require_ok(write_commit(tx, n));
      tx.set_durability(Durability::Immediate);
      require_ok(tx.commit().wait());
      apply_commit(&model, model_n++);
      Transaction r = begin_or_fail(tree, Mode::ReadOnly);
      REQUIRE(get_or_fail(r, commit_key(n)) == commit_value(n));
    }
    vlog_files_seen = std::max<uint64_t>(vlog_files_seen, tree.stats().vlog_files);
    require_ok(tree.close());
    start = n + 1;
  }

  const double secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  std::printf(
      "kill_crash: %d rounds in %.1f s, %d kills early, %d rounds with acknowledged commits, "
      "%" PRIu64 " commits acknowledged, %" PRIu64 " survive, %" PRIu64 " flushes, %" PRIu64
      " compactions seen, at most %" PRIu64 " value logs live%s\n",
      kRounds, secs, early_kills, rounds_with_acks, acked, start, flushes, compactions,
      vlog_files_seen, value_log ? " (value log on)" : "");
  // The run must really have exercised what it claims to.
  CHECK(rounds_with_acks >= kRounds / 2);
  CHECK(flushes > 0);
  CHECK(compactions > 0);
  if (value_log) CHECK(vlog_files_seen > 0);
  std::error_code ec;
  std::filesystem::remove_all(tmpl, ec);
}

}  // namespace

TEST_CASE("SIGKILL at random moments loses no acknowledged commit and keeps a prefix",
          "[tree][crash][posix]") {
  run_kill_rounds(false);
}

TEST_CASE("SIGKILL with the value log on and versioning loses nothing acknowledged",
          "[tree][crash][posix][vlog]") {
  run_kill_rounds(true);
}
