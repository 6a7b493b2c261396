// skv_sim: runs the deterministic simulation over a range of seeds.
//
//   skv_sim --seeds N --steps M [--first-seed S] [--jobs J] [--verbose] [--keep-going]
//
// Seeds S, S+1, ..., S+N-1 each run M operations (tools/sim/sim.h). With J > 1 the seeds are
// shared among J child processes (each its own MemoryPlatform, so one seed's run never depends
// on another's); a child that dies (a crash inside the engine) is reported with the seed it was
// running. A failure prints the seed, the step, what diverged and the command that replays it with
// every operation printed; the first one stops the run unless --keep-going. Exit status: 0 all
// passed, 1 a seed failed, 2 bad usage.

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/sim/sim.h"

namespace {

using skv::sim::SimConfig;
using skv::sim::SimResult;
using skv::sim::SimStats;

struct Args {
  uint64_t first_seed = 1;
  uint64_t seeds = 100;
  uint64_t steps = 1000;
  int jobs = 2;
  bool verbose = false;
  bool keep_going = false;
};

// What a child tells its parent through a pipe: a seed started, or finished with these stats.
struct Message {
  uint32_t kind = 0;  // kStarted, kPassed or kFailed
  uint64_t seed = 0;
  SimStats stats;
};
constexpr uint32_t kStarted = 1;
constexpr uint32_t kPassed = 2;
constexpr uint32_t kFailed = 3;
static_assert(sizeof(Message) < 512, "messages must be written atomically (PIPE_BUF)");

int usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s --seeds N --steps M [--first-seed S] [--jobs J] [--verbose] "
               "[--keep-going]\n",
               prog);
  return 2;
}

bool parse_u64(const char* s, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = v;
  return true;
}

void report_failure(const char* prog, const Args& args, const SimResult& r) {
  std::printf("FAIL seed %llu step %llu%s: %s\n", static_cast<unsigned long long>(r.seed),
              static_cast<unsigned long long>(r.step), r.step > args.steps ? " (final check)" : "",
              r.message.c_str());
  std::printf("replay: %s\n", skv::sim::replay_command(prog, r.seed, args.steps).c_str());
  std::fflush(stdout);
}

void print_summary(const Args& args, uint64_t passed, const SimStats& s) {
  std::printf(
      "skv_sim: %llu of %llu seeds passed (%llu steps each): %llu commits, %llu conflicts, "
      "%llu commit errors, %llu reads, %llu scans, %llu flushes, %llu compactions (deepest level "
      "%llu), %llu reopens, %llu crashes (%llu commits lost), %llu fault phases (%llu faults "
      "injected, %llu read errors), value logs (up to %llu files, up to %llu collections in one "
      "open); %llu versioned seeds: %llu set_at, %llu reads and %llu scans by time, %llu clock "
      "steps back, %llu timestamp probes, %llu refused opens; %llu encrypted seeds: %llu key "
      "rotations, %llu refused opens without a key manager or with a wrong key\n",
      static_cast<unsigned long long>(passed), static_cast<unsigned long long>(args.seeds),
      static_cast<unsigned long long>(args.steps), static_cast<unsigned long long>(s.commits),
      static_cast<unsigned long long>(s.conflicts),
      static_cast<unsigned long long>(s.commit_errors), static_cast<unsigned long long>(s.reads),
      static_cast<unsigned long long>(s.scans), static_cast<unsigned long long>(s.flushes),
      static_cast<unsigned long long>(s.compactions),
      static_cast<unsigned long long>(s.deepest_level), static_cast<unsigned long long>(s.reopens),
      static_cast<unsigned long long>(s.crashes), static_cast<unsigned long long>(s.lost_commits),
      static_cast<unsigned long long>(s.fault_phases),
      static_cast<unsigned long long>(s.faults_injected),
      static_cast<unsigned long long>(s.read_errors), static_cast<unsigned long long>(s.vlog_files),
      static_cast<unsigned long long>(s.vlog_gc_runs),
      static_cast<unsigned long long>(s.versioned_seeds),
      static_cast<unsigned long long>(s.timed_writes),
      static_cast<unsigned long long>(s.timed_reads),
      static_cast<unsigned long long>(s.timed_scans),
      static_cast<unsigned long long>(s.clock_steps_back),
      static_cast<unsigned long long>(s.ts_probes),
      static_cast<unsigned long long>(s.refused_opens),
      static_cast<unsigned long long>(s.encrypted_seeds),
      static_cast<unsigned long long>(s.key_rotations),
      static_cast<unsigned long long>(s.refused_encrypted_opens));
}

SimResult run_seed(const Args& args, uint64_t seed) {
  SimConfig config;
  config.seed = seed;
  config.steps = args.steps;
  config.verbose = args.verbose;
  return skv::sim::run_simulation(config);
}

// One process runs every seed in turn.
int run_inline(const char* prog, const Args& args) {
  SimStats total;
  uint64_t passed = 0;
  for (uint64_t i = 0; i < args.seeds; ++i) {
    SimResult r = run_seed(args, args.first_seed + i);
    if (!r.ok) {
      report_failure(prog, args, r);
      if (!args.keep_going) break;
      continue;
    }
    total.add(r.stats);
    ++passed;
  }
  print_summary(args, passed, total);
  return passed == args.seeds ? 0 : 1;
}

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Child `job` of `jobs`: runs seeds first + job, first + job + jobs, ...
[[noreturn]] void child(const char* prog, const Args& args, int job, int fd) {
  uint64_t failures = 0;
  for (uint64_t i = static_cast<uint64_t>(job); i < args.seeds;
       i += static_cast<uint64_t>(args.jobs)) {
    Message m;
    m.kind = kStarted;
    m.seed = args.first_seed + i;
    if (!write_all(fd, &m, sizeof(m))) _exit(3);
    SimResult r = run_seed(args, m.seed);
    if (!r.ok) {
      report_failure(prog, args, r);
      ++failures;
      m.kind = kFailed;
      if (!write_all(fd, &m, sizeof(m))) _exit(3);
      if (!args.keep_going) {
        std::fflush(stdout);
        _exit(1);
      }
      continue;
    }
    m.kind = kPassed;
    m.stats = r.stats;
    if (!write_all(fd, &m, sizeof(m))) _exit(3);
  }
  std::fflush(stdout);
  _exit(failures == 0 ? 0 : 1);
}

int run_forked(const char* prog, const Args& args) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("skv_sim: pipe");
    return 1;
  }
  std::fflush(stdout);
  std::vector<pid_t> pids;
  std::vector<uint64_t> current;  // the seed each child is running
  for (int j = 0; j < args.jobs; ++j) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("skv_sim: fork");
      return 1;
    }
    if (pid == 0) {
      close(fds[0]);
      child(prog, args, j, fds[1]);
    }
    pids.push_back(pid);
    current.push_back(0);
  }
  close(fds[1]);

  SimStats total;
  uint64_t passed = 0;
  bool stopped = false;
  Message m;
  size_t got = 0;
  while (true) {
    ssize_t n = read(fds[0], reinterpret_cast<char*>(&m) + got, sizeof(m) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every child closed its end
    got += static_cast<size_t>(n);
    if (got < sizeof(m)) continue;
    got = 0;
    const size_t job =
        static_cast<size_t>((m.seed - args.first_seed) % static_cast<uint64_t>(args.jobs));
    if (m.kind == kStarted) {
      current[job] = m.seed;
    } else if (m.kind == kFailed) {
      current[job] = 0;
      if (!args.keep_going && !stopped) {
        // The first failure ends the run: stop the other workers.
        for (size_t j = 0; j < pids.size(); ++j) {
          if (j != job) kill(pids[j], SIGTERM);
        }
        stopped = true;
      }
    } else {
      total.add(m.stats);
      ++passed;
      current[job] = 0;
    }
  }
  close(fds[0]);

  int rc = 0;
  for (size_t j = 0; j < pids.size(); ++j) {
    int status = 0;
    while (waitpid(pids[j], &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    rc = 1;
    if (stopped && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) continue;
    if (WIFSIGNALED(status)) {
      std::printf("FAIL seed %llu: the process died with signal %d (%s)\n",
                  static_cast<unsigned long long>(current[j]), WTERMSIG(status),
                  strsignal(WTERMSIG(status)));
      std::printf("replay: %s\n", skv::sim::replay_command(prog, current[j], args.steps).c_str());
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 1) {
      std::printf("FAIL: worker %zu exited with status %d\n", j, WEXITSTATUS(status));
    }
  }
  print_summary(args, passed, total);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    uint64_t v = 0;
    if (a == "--verbose") {
      args.verbose = true;
    } else if (a == "--keep-going") {
      args.keep_going = true;
    } else if (i + 1 < argc &&
               (a == "--seeds" || a == "--steps" || a == "--first-seed" || a == "--jobs")) {
      if (!parse_u64(argv[++i], &v)) return usage(argv[0]);
      if (a == "--seeds") args.seeds = v;
      if (a == "--steps") args.steps = v;
      if (a == "--first-seed") args.first_seed = v;
      if (a == "--jobs") {
        if (v < 1 || v > 64) return usage(argv[0]);
        args.jobs = static_cast<int>(v);
      }
    } else {
      return usage(argv[0]);
    }
  }
  if (args.jobs > 1 && args.seeds > 1) return run_forked(argv[0], args);
  return run_inline(argv[0], args);
}
