// skv_bench: runs one workload (the crud-bench style one, or the large-value one) against skv,
// RocksDB, LMDB, LevelDB and SQLite, one engine after the other, each in a fresh directory and
// (by default) in a child process of its own so that its memory and disk-write figures are its
// own; then prints one report (Markdown) and optionally writes it and a JSON file. See
// docs/benchmarks.md.
//
// Exit status: 0 every engine completed, 1 one failed (the others are still reported), 2 bad
// usage.

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine.h"
#include "report.h"
#include "workload.h"
#include "workload_phases.h"

namespace skv::bench {
namespace {

constexpr char kUsage[] =
    "usage: skv_bench [options]\n"
    "\n"
    "  --workload W        crud (default) or large: large values, write and space\n"
    "                      amplification (docs/benchmarks.md)\n"
    "  --n N               rows of the single-row phases (default 200000; large: 256 MiB of\n"
    "                      values, 32768 rows of 8 KiB)\n"
    "  --clients C         client threads (default 64)\n"
    "  --engines LIST      comma-separated: skv,rocksdb,lmdb,leveldb,sqlite (default: all for\n"
    "                      crud), skv-vlog (skv with its value log), rocksdb-blob (RocksDB with\n"
    "                      blob files); default for large: skv,skv-vlog,rocksdb-blob,rocksdb\n"
    "                      skv-xchacha, skv-aes (skv with every file sealed, docs/encryption.md)\n"
    "  --encryption E      xchacha, aes or off: run skv with every file sealed with that cipher\n"
    "                      beside plaintext skv (sets --engines skv,skv-E unless it is given)\n"
    "  --value-size B      bytes of every value of the large workload (default 8192)\n"
    "  --value-threshold B smallest value that skv-vlog puts in its value log and rocksdb-blob\n"
    "                      in a blob file (default 1024)\n"
    "  --rounds R          run every engine R times, interleaved; report the median (default 1)\n"
    "  --sync on|off       durable commits (default off); see docs/benchmarks.md\n"
    "  --cache-mib M       block cache of skv, RocksDB and LevelDB (default 64)\n"
    "  --batch-rows R      rows written, read, ... by each batch phase (default N)\n"
    "  --scan-repeats S    runs of each 100-row scan (default 2000)\n"
    "  --count-repeats S   runs of the full count, or of the large workload's full scan\n"
    "                      (default 10)\n"
    "  --settle-seconds T  pause before the resting memory is read (default 2)\n"
    "  --settle-phases on|off  after each phase, wait until the engine's flushes and\n"
    "                      compactions are done before the next (default on; the run fails\n"
    "                      after 300 s)\n"
    "  --dir DIR           parent of the engines' directories (default /tmp/skv-bench)\n"
    "  --markdown FILE     also write the report to FILE\n"
    "  --json FILE         write every figure as JSON to FILE\n"
    "  --keep              keep the engines' directories\n"
    "  --no-fork           run every engine in this process (peak memory is then shared)\n"
    "  --profile-phase ID  with SKV_BENCH_PERF_CTL and SKV_BENCH_PERF_ACK naming the control\n"
    "                      and ack FIFOs of 'perf record --control fifo:CTL,ACK -D -1', record\n"
    "                      only phase ID (create, read, update, scan_keys, ...)\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "skv_bench: %s\n\n%s", message.c_str(), kUsage);
  std::exit(2);
}

uint64_t parse_number(const std::string& flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') usage_error(flag + " wants a number");
  return v;
}

RunConfig parse_flags(int argc, char** argv, std::string& markdown_file, std::string& json_file) {
  RunConfig c;
  bool n_given = false;
  bool engines_given = false;
  std::string encryption = "off";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(arg + " wants a value");
      return argv[++i];
    };
    if (arg == "--workload") {
      c.workload = value();
      if (c.workload != "crud" && c.workload != "large") usage_error("--workload: crud or large");
    } else if (arg == "--n") {
      c.n = parse_number(arg, value());
      n_given = true;
    } else if (arg == "--value-size") {
      c.value_size = static_cast<size_t>(parse_number(arg, value()));
    } else if (arg == "--value-threshold") {
      c.value_threshold = static_cast<size_t>(parse_number(arg, value()));
    } else if (arg == "--clients") {
      c.clients = static_cast<int>(parse_number(arg, value()));
    } else if (arg == "--rounds") {
      c.rounds = static_cast<int>(parse_number(arg, value()));
    } else if (arg == "--engines") {
      c.engines.clear();
      engines_given = true;
      std::stringstream ss(value());
      std::string e;
      while (std::getline(ss, e, ',')) {
        if (!e.empty()) c.engines.push_back(e);
      }
    } else if (arg == "--encryption") {
      encryption = value();
      if (encryption != "xchacha" && encryption != "aes" && encryption != "off") {
        usage_error("--encryption wants xchacha, aes or off");
      }
    } else if (arg == "--sync") {
      const std::string v = value();
      if (v != "on" && v != "off") usage_error("--sync wants on or off");
      c.sync = v == "on";
    } else if (arg == "--cache-mib") {
      c.cache_bytes = static_cast<size_t>(parse_number(arg, value())) << 20;
    } else if (arg == "--batch-rows") {
      c.batch_rows = parse_number(arg, value());
    } else if (arg == "--scan-repeats") {
      c.scan_repeats = parse_number(arg, value());
    } else if (arg == "--count-repeats") {
      c.count_repeats = parse_number(arg, value());
    } else if (arg == "--settle-seconds") {
      c.settle_seconds = static_cast<double>(parse_number(arg, value()));
    } else if (arg == "--settle-phases") {
      const std::string v = value();
      if (v != "on" && v != "off") usage_error("--settle-phases wants on or off");
      c.settle_phases = v == "on";
    } else if (arg == "--dir") {
      c.dir = value();
    } else if (arg == "--markdown") {
      markdown_file = value();
    } else if (arg == "--json") {
      json_file = value();
    } else if (arg == "--keep") {
      c.keep = true;
    } else if (arg == "--no-fork") {
      c.fork = false;
    } else if (arg == "--profile-phase") {
      c.profile_phase = value();
    } else {
      usage_error("unknown option " + arg);
    }
  }
  if (c.workload == "large") {
    if (c.value_size < 256 || c.value_size > (16u << 20)) {
      usage_error("--value-size must be between 256 and 16777216");
    }
    if (!n_given) c.n = std::max<uint64_t>(1, (uint64_t{256} << 20) / c.value_size);
    if (!engines_given) c.engines = {"skv", "skv-vlog", "rocksdb-blob", "rocksdb"};
  }
  if (encryption != "off" && !engines_given) c.engines = {"skv", "skv-" + encryption};
  if (c.n == 0 || c.n > UINT32_MAX / 4) usage_error("--n must be between 1 and 1073741823");
  if (c.clients < 1 || c.clients > 1024) usage_error("--clients must be between 1 and 1024");
  if (c.rounds < 1 || c.rounds > 100) usage_error("--rounds must be between 1 and 100");
  if (c.batch_rows == 0) c.batch_rows = c.n;
  if (c.n + 2 * c.batch_rows > UINT32_MAX) usage_error("--n plus twice --batch-rows is too big");
  if (c.engines.empty()) usage_error("--engines is empty");
  for (const std::string& e : c.engines) {
    if (e != "skv" && e != "skv-vlog" && e != "skv-xchacha" && e != "skv-aes" && e != "rocksdb" &&
        e != "rocksdb-blob" && e != "lmdb" && e != "leveldb" && e != "sqlite") {
      usage_error("unknown engine " + e);
    }
  }
  return c;
}

std::unique_ptr<Engine> make_engine(const std::string& key) {
  if (key == "skv" || key == "skv-vlog") return make_skv_engine(key == "skv-vlog");
  if (key == "skv-xchacha") return make_skv_engine(false, CipherSuite::XChaCha20Poly1305);
  if (key == "skv-aes") return make_skv_engine(false, CipherSuite::Aes256Gcm);
  if (key == "rocksdb" || key == "rocksdb-blob") return make_rocksdb_engine(key == "rocksdb-blob");
  if (key == "lmdb") return make_lmdb_engine();
  if (key == "leveldb") return make_leveldb_engine();
  return make_sqlite_engine();
}

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), 0 if missing.
uint64_t proc_status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0)
      return std::strtoull(line.c_str() + prefix.size(), nullptr, 10) * 1024;
  }
  return 0;
}

// A field of /proc/self/io in bytes ("write_bytes"), 0 if missing. The file sums every thread of
// the process, the engine's background threads included, and those that have exited.
uint64_t proc_io_bytes(const char* field) {
  std::ifstream in("/proc/self/io");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtoull(line.c_str() + prefix.size(), nullptr, 10);
  }
  return 0;
}

// Minor page faults of the whole process so far (fresh pages of the heap, pages of the
// page cache mapped in): with the phase's file reads, where its kernel time goes.
uint64_t minor_faults() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_minflt);
}

// The files under `dir`: the bytes they occupy on disk (allocated blocks, so LMDB's sparse map
// counts only what it wrote), and the sum of their sizes.
struct DirSize {
  uint64_t allocated = 0;
  uint64_t files = 0;
};

DirSize dir_size(const std::string& dir) {
  DirSize total;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total.allocated += static_cast<uint64_t>(st.st_blocks) * 512;
      total.files += static_cast<uint64_t>(st.st_size);
    }
  }
  return total;
}

// Turns a `perf record --control` recording on or off, if one was set up.
class PerfControl {
 public:
  PerfControl() {
    const char* ctl = std::getenv("SKV_BENCH_PERF_CTL");
    const char* ack = std::getenv("SKV_BENCH_PERF_ACK");
    if (ctl == nullptr || ack == nullptr) return;
    ctl_ = ::open(ctl, O_WRONLY);
    ack_ = ::open(ack, O_RDONLY);
  }
  ~PerfControl() {
    if (ctl_ >= 0) ::close(ctl_);
    if (ack_ >= 0) ::close(ack_);
  }
  void send(const char* command) {
    if (ctl_ < 0 || ack_ < 0) return;
    const std::string line = std::string(command) + "\n";
    if (::write(ctl_, line.data(), line.size()) < 0) return;
    char buf[16];
    if (::read(ack_, buf, sizeof buf) < 0) return;
  }

 private:
  int ctl_ = -1;
  int ack_ = -1;
};

// Polls the engine every 10 ms until its background work is done; returns the seconds waited.
// After 300 s the engine's run fails with BenchError rather than hang or report figures that
// include work the wait was meant to keep out.
double wait_for_background(Engine& engine) {
  const uint64_t start = now_ns();
  constexpr uint64_t kLimitNs = uint64_t{300} * 1000000000;
  while (!engine.background_idle()) {
    if (now_ns() - start >= kLimitNs) {
      throw BenchError("background work not done after 300 s (--settle-phases off skips the wait)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return static_cast<double>(now_ns() - start) / 1e9;
}

// Receives each result as soon as it is known, so a crash mid-run still reports what finished.
struct Sink {
  std::function<void(const std::string&, const std::string&)> engine;  // name, durability
  std::function<void(const PhaseResult&)> phase;
  std::function<void(const std::string&)> counters;
  // RSS open, rest, trimmed, peak; the directory's bytes at rest
  std::function<void(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t)> memory;
};

void run_engine(const RunConfig& config, const std::string& key, const Sink& sink) {
  if (config.fork) {
    // This process runs one engine only: start its peak at what it holds now (a few MiB).
    std::ofstream("/proc/self/clear_refs") << "5";
  }
  std::unique_ptr<Engine> engine = make_engine(key);
  sink.engine(engine->name(), engine->durability());
  const std::string dir = config.dir + "/" + key;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  EngineConfig ec;
  ec.dir = dir;
  ec.sync = config.sync;
  ec.cache_bytes = config.cache_bytes;
  ec.clients = config.clients;
  ec.expected_rows = config.n + config.batch_rows;
  ec.max_value_size = config.workload == "large" ? config.value_size : kMaxValueSize;
  ec.value_threshold = config.value_threshold;
  engine->open(ec);
  const uint64_t rss_open = proc_status_bytes("VmRSS");
  // Disk writes and user data from here on: the opening's own writes are not the workload's.
  const uint64_t written_open = proc_io_bytes("write_bytes");
  uint64_t user_bytes_total = 0;

  const int clients = config.clients;
  PerfControl perf;
  uint64_t seed = 1;
  uint64_t max_rss = rss_open;
  auto phase = [&](const std::string& id, uint64_t ops, uint64_t user_bytes_per_row,
                   const OpFn& op) {
    std::fprintf(stderr, "[%s] %s ...", engine->name().c_str(), id.c_str());
    std::fflush(stderr);
    const uint64_t written_before = proc_io_bytes("write_bytes");
    const std::optional<Engine::CommitTotals> totals_before = engine->commit_totals();
    // Bytes and calls of read(2)-like system calls over the phase, page cache hits included:
    // the blocks a phase's reads (and the background work meanwhile) fetched from files.
    const uint64_t read_before = proc_io_bytes("rchar");
    const uint64_t read_calls_before = proc_io_bytes("syscr");
    const uint64_t faults_before = minor_faults();
    if (id == config.profile_phase) perf.send("enable");
    PhaseResult r = run_phase(id, ops, clients, seed++, op);
    if (id == config.profile_phase) perf.send("disable");
    const uint64_t read_mib = (proc_io_bytes("rchar") - read_before) >> 20;
    const uint64_t read_calls = proc_io_bytes("syscr") - read_calls_before;
    const uint64_t faults = minor_faults() - faults_before;
    if (const std::optional<Engine::CommitTotals> after = engine->commit_totals();
        after && totals_before) {
      r.commits = after->commits - totals_before->commits;
      r.wal_syncs = after->wal_syncs - totals_before->wal_syncs;
    }
    if (config.settle_phases) r.settle_seconds = wait_for_background(*engine);
    const uint64_t written_after = proc_io_bytes("write_bytes");
    r.disk_written = written_after - written_before;
    r.disk_written_total = written_after - written_open;
    r.user_bytes = r.rows * user_bytes_per_row;
    user_bytes_total += r.user_bytes;
    r.user_bytes_total = user_bytes_total;
    r.rss_after = proc_status_bytes("VmRSS");
    max_rss = std::max(max_rss, r.rss_after);
    const DirSize size = dir_size(dir);
    r.disk_after = size.allocated;
    r.files_after = size.files;
    const std::string shape = engine->shape();
    std::fprintf(stderr,
                 " %.2f s, %.0f ops/s, read %" PRIu64 " MiB in %" PRIu64 " calls, %" PRIu64
                 " page faults, settled in %.2f s%s%s\n",
                 r.seconds, r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0.0, read_mib,
                 read_calls, faults, r.settle_seconds, shape.empty() ? "" : ", tables per level ",
                 shape.c_str());
    sink.phase(r);
  };
  Engine& e = *engine;

  if (config.workload == "large") {
    run_large_workload(config, e, phase);
  } else {
    run_crud_workload(config, e, phase);
  }

  std::this_thread::sleep_for(std::chrono::duration<double>(config.settle_seconds));
  sink.counters(engine->counters());
  const uint64_t rss_rest = proc_status_bytes("VmRSS");
  // After the settle pause, still open: background compaction has had that long to free space.
  const uint64_t disk_rest = dir_size(dir).allocated;
  // The client threads' malloc arenas keep freed memory (the harness's batches, the engine's
  // garbage); trimming shows what is still in use.
  malloc_trim(0);
  // The kernel updates VmHWM lazily, so it can trail a reading of VmRSS taken earlier.
  sink.memory(rss_open, rss_rest, proc_status_bytes("VmRSS"),
              std::max(proc_status_bytes("VmHWM"), std::max(rss_rest, max_rss)), disk_rest);
  engine->close();
  engine.reset();
  if (!config.keep) std::filesystem::remove_all(dir);
}

// The child's side of the pipe: one line per result. Fields are separated by tabs; text fields
// come last and hold no tabs or newlines.
void write_line(int fd, const std::string& line) {
  std::string s = line + "\n";
  const char* p = s.data();
  size_t left = s.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    left -= static_cast<size_t>(w);
  }
}

std::string clean(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

void parse_line(const std::string& line, EngineRun& run) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, '\t')) f.push_back(field);
  if (f.empty()) return;
  auto num = [&](size_t i) { return i < f.size() ? std::strtoull(f[i].c_str(), nullptr, 10) : 0; };
  if (f[0] == "engine" && f.size() >= 3) {
    run.name = f[1];
    run.durability = f[2];
  } else if (f[0] == "phase" && f.size() >= 11) {
    PhaseResult p;
    p.id = f[1];
    p.ops = num(2);
    p.rows = num(3);
    p.misses = num(4);
    p.seconds = std::strtod(f[5].c_str(), nullptr);
    p.p50_ns = num(6);
    p.p99_ns = num(7);
    p.max_ns = num(8);
    p.rss_after = num(9);
    p.disk_after = num(10);
    p.files_after = num(11);
    p.user_bytes = num(12);
    p.disk_written = num(13);
    p.user_bytes_total = num(14);
    p.disk_written_total = num(15);
    if (f.size() >= 18) {
      p.commits = num(16);
      p.wal_syncs = num(17);
    }
    if (f.size() >= 19) p.settle_seconds = std::strtod(f[18].c_str(), nullptr);
    run.phases.push_back(p);
  } else if (f[0] == "memory" && f.size() >= 5) {
    run.rss_open = num(1);
    run.rss_rest = num(2);
    run.rss_trimmed = num(3);
    run.rss_peak = num(4);
    run.disk_rest = num(5);
  } else if (f[0] == "counters" && f.size() >= 2) {
    run.counters = f[1];
  } else if (f[0] == "error" && f.size() >= 2) {
    run.error = f[1];
  }
}

Sink line_sink(const std::function<void(const std::string&)>& out) {
  Sink s;
  s.engine = [out](const std::string& name, const std::string& durability) {
    out("engine\t" + clean(name) + "\t" + clean(durability));
  };
  s.phase = [out](const PhaseResult& p) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "phase\t%s\t%llu\t%llu\t%llu\t%.9f", p.id.c_str(),
                  static_cast<unsigned long long>(p.ops), static_cast<unsigned long long>(p.rows),
                  static_cast<unsigned long long>(p.misses), p.seconds);
    std::string line = buf;
    for (const uint64_t v :
         {p.p50_ns, p.p99_ns, p.max_ns, p.rss_after, p.disk_after, p.files_after, p.user_bytes,
          p.disk_written, p.user_bytes_total, p.disk_written_total, p.commits, p.wal_syncs}) {
      line += "\t" + std::to_string(v);
    }
    std::snprintf(buf, sizeof buf, "\t%.3f", p.settle_seconds);
    out(line + buf);
  };
  s.counters = [out](const std::string& text) {
    if (!text.empty()) out("counters\t" + clean(text));
  };
  s.memory = [out](uint64_t open, uint64_t rest, uint64_t trimmed, uint64_t peak,
                   uint64_t disk_rest) {
    out("memory\t" + std::to_string(open) + "\t" + std::to_string(rest) + "\t" +
        std::to_string(trimmed) + "\t" + std::to_string(peak) + "\t" + std::to_string(disk_rest));
  };
  return s;
}

// Runs one engine and returns what it reported: in a child process (the parent never starts a
// thread, so forking is safe), or here with --no-fork.
EngineRun run_one(const RunConfig& config, const std::string& key) {
  EngineRun run;
  run.key = key;
  run.name = key;
  if (!config.fork) {
    Sink sink = line_sink([&](const std::string& line) { parse_line(line, run); });
    try {
      run_engine(config, key, sink);
    } catch (const std::exception& e) {
      run.error = e.what();
    }
    return run;
  }
  int fds[2];
  if (::pipe(fds) != 0) {
    run.error = std::string("pipe: ") + std::strerror(errno);
    return run;
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    run.error = std::string("fork: ") + std::strerror(errno);
    return run;
  }
  if (pid == 0) {
    ::close(fds[0]);
    const int fd = fds[1];
    int code = 0;
    try {
      run_engine(config, key, line_sink([fd](const std::string& line) { write_line(fd, line); }));
    } catch (const std::exception& e) {
      write_line(fd, "error\t" + clean(e.what()));
      std::fprintf(stderr, "\nskv_bench: %s: %s\n", key.c_str(), e.what());
      code = 1;
    }
    ::close(fd);
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(fds[1]);
  std::string buffer;
  char chunk[4096];
  for (;;) {
    ssize_t r = ::read(fds[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    buffer.append(chunk, static_cast<size_t>(r));
    size_t nl;
    while ((nl = buffer.find('\n')) != std::string::npos) {
      parse_line(buffer.substr(0, nl), run);
      buffer.erase(0, nl + 1);
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (run.error.empty()) {
    if (WIFSIGNALED(status)) {
      run.error = "killed by signal " + std::to_string(WTERMSIG(status));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      run.error = "exited with status " + std::to_string(WEXITSTATUS(status));
    }
  }
  return run;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "skv_bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

// 4 KiB written at the start of a file, then fdatasync(), in a loop for about a second: the
// device's own rate of durable writes, the ceiling for an engine that syncs each commit alone
// and the unit group commit multiplies. 0 if the file cannot be made.
double measure_fdatasync_rate(const std::string& dir) {
  const std::string path = dir + "/fdatasync-probe";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  const std::string block(4096, 'x');
  uint64_t syncs = 0;
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0;
  while (seconds < 1.0) {
    if (::pwrite(fd, block.data(), block.size(), 0) != static_cast<ssize_t>(block.size()) ||
        ::fdatasync(fd) != 0) {
      syncs = 0;
      break;
    }
    ++syncs;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  ::close(fd);
  ::unlink(path.c_str());
  return syncs > 0 && seconds > 0 ? static_cast<double>(syncs) / seconds : 0;
}

int main_impl(int argc, char** argv) {
  std::string markdown_file, json_file;
  const RunConfig config = parse_flags(argc, argv, markdown_file, json_file);
  std::filesystem::create_directories(config.dir);
  // With --sync on, what the device itself can do, measured where the engines write, so the
  // report can set each engine's syncs per second beside it.
  const double fdatasync_rate = config.sync ? measure_fdatasync_rate(config.dir) : 0;
  // Rounds interleave the engines, so a burst of load on a shared host hits one round of each
  // rather than every round of one.
  std::vector<std::vector<EngineRun>> rounds(config.engines.size());
  for (int round = 0; round < config.rounds; ++round) {
    if (config.rounds > 1) std::fprintf(stderr, "round %d of %d\n", round + 1, config.rounds);
    for (size_t e = 0; e < config.engines.size(); ++e) {
      rounds[e].push_back(run_one(config, config.engines[e]));
    }
  }
  std::vector<EngineRun> runs;
  bool failed = false;
  for (const std::vector<EngineRun>& r : rounds) {
    runs.push_back(combine_rounds(r));
    failed = failed || !runs.back().error.empty();
  }
  if (!config.keep) {
    std::error_code ec;
    std::filesystem::remove(config.dir, ec);  // only if empty: it may hold other things
  }
  Machine machine = describe_machine();
  machine.fdatasync_per_second = fdatasync_rate;
  const std::string markdown = render_markdown(config, machine, runs);
  std::fputs("\n", stdout);
  std::fputs(markdown.c_str(), stdout);
  if (!markdown_file.empty() && !write_file(markdown_file, markdown)) failed = true;
  if (!json_file.empty() && !write_file(json_file, render_json(config, machine, runs))) {
    failed = true;
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace skv::bench

int main(int argc, char** argv) { return skv::bench::main_impl(argc, argv); }
