// skv_bench: runs one crud-bench style workload against skv, RocksDB, LMDB, LevelDB and SQLite,
// one engine after the other, each in a fresh directory and (by default) in a child process of
// its own so that its memory figures are its own; then prints one report (Markdown) and
// optionally writes it and a JSON file. See docs/benchmarks.md.
//
// Exit status: 0 every engine completed, 1 one failed (the others are still reported), 2 bad
// usage.

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine.h"
#include "report.h"
#include "workload.h"

namespace skv::bench {
namespace {

constexpr char kUsage[] =
    "usage: skv_bench [options]\n"
    "\n"
    "  --n N               rows of the single-row phases (default 200000)\n"
    "  --clients C         client threads (default 64)\n"
    "  --engines LIST      comma-separated: skv,rocksdb,lmdb,leveldb,sqlite (default: all)\n"
    "  --rounds R          run every engine R times, interleaved; report the median (default 1)\n"
    "  --sync on|off       durable commits (default off); see docs/benchmarks.md\n"
    "  --cache-mib M       block cache of skv, RocksDB and LevelDB (default 64)\n"
    "  --batch-rows R      rows written, read, ... by each batch phase (default N)\n"
    "  --scan-repeats S    runs of each 100-row scan (default 2000)\n"
    "  --count-repeats S   runs of the full count (default 10)\n"
    "  --settle-seconds T  pause before the resting memory is read (default 2)\n"
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
    if (arg == "--n") {
      c.n = parse_number(arg, value());
    } else if (arg == "--clients") {
      c.clients = static_cast<int>(parse_number(arg, value()));
    } else if (arg == "--rounds") {
      c.rounds = static_cast<int>(parse_number(arg, value()));
    } else if (arg == "--engines") {
      c.engines.clear();
      std::stringstream ss(value());
      std::string e;
      while (std::getline(ss, e, ',')) {
        if (!e.empty()) c.engines.push_back(e);
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
  if (c.n == 0 || c.n > UINT32_MAX / 4) usage_error("--n must be between 1 and 1073741823");
  if (c.clients < 1 || c.clients > 1024) usage_error("--clients must be between 1 and 1024");
  if (c.rounds < 1 || c.rounds > 100) usage_error("--rounds must be between 1 and 100");
  if (c.batch_rows == 0) c.batch_rows = c.n;
  if (c.n + 2 * c.batch_rows > UINT32_MAX) usage_error("--n plus twice --batch-rows is too big");
  if (c.engines.empty()) usage_error("--engines is empty");
  for (const std::string& e : c.engines) {
    if (e != "skv" && e != "rocksdb" && e != "lmdb" && e != "leveldb" && e != "sqlite") {
      usage_error("unknown engine " + e);
    }
  }
  return c;
}

std::unique_ptr<Engine> make_engine(const std::string& key) {
  if (key == "skv") return make_skv_engine();
  if (key == "rocksdb") return make_rocksdb_engine();
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

// Bytes the files under `dir` occupy on disk (allocated blocks, so LMDB's sparse map counts
// only what it wrote).
uint64_t disk_bytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      total += static_cast<uint64_t>(st.st_blocks) * 512;
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

// Receives each result as soon as it is known, so a crash mid-run still reports what finished.
struct Sink {
  std::function<void(const std::string&, const std::string&)> engine;  // name, durability
  std::function<void(const PhaseResult&)> phase;
  std::function<void(const std::string&)> counters;
  std::function<void(uint64_t, uint64_t, uint64_t, uint64_t)> memory;  // open, rest, trimmed, peak
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
  engine->open(ec);
  const uint64_t rss_open = proc_status_bytes("VmRSS");

  const uint64_t n = config.n;
  const int clients = config.clients;
  PerfControl perf;
  uint64_t seed = 1;
  uint64_t max_rss = rss_open;
  auto phase = [&](const std::string& id, uint64_t ops, const OpFn& op) {
    std::fprintf(stderr, "[%s] %s ...", engine->name().c_str(), id.c_str());
    std::fflush(stderr);
    if (id == config.profile_phase) perf.send("enable");
    PhaseResult r = run_phase(id, ops, clients, seed++, op);
    if (id == config.profile_phase) perf.send("disable");
    r.rss_after = proc_status_bytes("VmRSS");
    max_rss = std::max(max_rss, r.rss_after);
    r.disk_after = disk_bytes(dir);
    std::fprintf(stderr, " %.2f s, %.0f ops/s\n", r.seconds,
                 r.seconds > 0 ? static_cast<double>(r.ops) / r.seconds : 0.0);
    sink.phase(r);
  };
  Engine& e = *engine;

  // Single-row phases over operation indices 0 .. n-1.
  phase("create", n, [&](int w, uint64_t i, Rng& rng, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    thread_local std::string v;
    make_value(rng, static_cast<uint32_t>(i), v);
    const uint64_t t0 = now_ns();
    e.create(w, k, v);
    ++rows;
    return now_ns() - t0;
  });
  phase("read", n, [&](int w, uint64_t i, Rng&, uint64_t& rows, uint64_t& misses) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    const uint64_t t0 = now_ns();
    const bool found = e.read(w, k);
    const uint64_t t = now_ns() - t0;
    ++rows;
    if (!found) ++misses;
    return t;
  });
  phase("update", n, [&](int w, uint64_t i, Rng& rng, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    thread_local std::string v;
    make_value(rng, static_cast<uint32_t>(i), v);
    const uint64_t t0 = now_ns();
    e.update(w, k, v);
    ++rows;
    return now_ns() - t0;
  });

  // Scans from the first key.
  auto scan = [&](const std::string& id, uint64_t repeats, uint64_t skip, uint64_t limit,
                  bool values, uint64_t expect) {
    phase(
        id, repeats,
        [&, skip, limit, values, expect](int w, uint64_t, Rng&, uint64_t& rows, uint64_t& misses) {
          const uint64_t t0 = now_ns();
          const uint64_t got = limit == 0 ? e.count_all(w) : e.scan(w, skip, limit, values);
          const uint64_t t = now_ns() - t0;
          rows += got;
          if (got != expect) ++misses;
          return t;
        });
  };
  const uint64_t after_skip = n > 5000 ? std::min<uint64_t>(100, n - 5000) : 0;
  scan("scan_count", config.count_repeats, 0, 0, false, n);
  scan("scan_keys", config.scan_repeats, 0, 100, false, std::min<uint64_t>(100, n));
  scan("scan_pairs", config.scan_repeats, 0, 100, true, std::min<uint64_t>(100, n));
  scan("scan_skip_keys", config.scan_repeats, 5000, 100, false, after_skip);
  scan("scan_skip_pairs", config.scan_repeats, 5000, 100, true, after_skip);

  phase("delete", n, [&](int w, uint64_t i, Rng&, uint64_t& rows, uint64_t&) {
    const std::string k = make_key(static_cast<uint32_t>(i));
    const uint64_t t0 = now_ns();
    e.remove(w, k);
    ++rows;
    return now_ns() - t0;
  });

  // Batches: batch j of size s covers indices base + j*s .. base + j*s + s-1, past the rows of
  // the single-row phases, and a different range for each batch size.
  uint64_t base = n;
  for (const uint64_t size : {uint64_t{100}, uint64_t{1000}}) {
    const uint64_t batches = std::max<uint64_t>(1, config.batch_rows / size);
    const std::string suffix = "_" + std::to_string(size);
    auto rows_of = [base, size](uint64_t j, Rng* rng, std::vector<Row>& out) {
      out.resize(size);
      for (uint64_t r = 0; r < size; ++r) {
        const uint32_t index = static_cast<uint32_t>(base + j * size + r);
        out[r].first = make_key(index);
        if (rng != nullptr) make_value(*rng, index, out[r].second);
      }
    };
    auto keys_of = [base, size](uint64_t j, std::vector<std::string>& out) {
      out.resize(size);
      for (uint64_t r = 0; r < size; ++r)
        out[r] = make_key(static_cast<uint32_t>(base + j * size + r));
    };
    auto write = [&](const std::string& id, bool update) {
      phase(id, batches, [&, update](int w, uint64_t j, Rng& rng, uint64_t& rows, uint64_t&) {
        thread_local std::vector<Row> batch;
        rows_of(j, &rng, batch);
        const uint64_t t0 = now_ns();
        if (update) {
          e.update_batch(w, batch);
        } else {
          e.create_batch(w, batch);
        }
        rows += batch.size();
        return now_ns() - t0;
      });
    };
    write("batch_create" + suffix, false);
    phase("batch_read" + suffix, batches,
          [&](int w, uint64_t j, Rng&, uint64_t& rows, uint64_t& misses) {
            thread_local std::vector<std::string> keys;
            keys_of(j, keys);
            const uint64_t t0 = now_ns();
            const size_t found = e.read_batch(w, keys);
            const uint64_t t = now_ns() - t0;
            rows += keys.size();
            misses += keys.size() - found;
            return t;
          });
    write("batch_update" + suffix, true);
    phase("batch_delete" + suffix, batches,
          [&](int w, uint64_t j, Rng&, uint64_t& rows, uint64_t&) {
            thread_local std::vector<std::string> keys;
            keys_of(j, keys);
            const uint64_t t0 = now_ns();
            e.remove_batch(w, keys);
            rows += keys.size();
            return now_ns() - t0;
          });
    base += config.batch_rows;
  }

  std::this_thread::sleep_for(std::chrono::duration<double>(config.settle_seconds));
  sink.counters(engine->counters());
  const uint64_t rss_rest = proc_status_bytes("VmRSS");
  // The client threads' malloc arenas keep freed memory (the harness's batches, the engine's
  // garbage); trimming shows what is still in use.
  malloc_trim(0);
  // The kernel updates VmHWM lazily, so it can trail a reading of VmRSS taken earlier.
  sink.memory(rss_open, rss_rest, proc_status_bytes("VmRSS"),
              std::max(proc_status_bytes("VmHWM"), std::max(rss_rest, max_rss)));
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
    run.phases.push_back(p);
  } else if (f[0] == "memory" && f.size() >= 5) {
    run.rss_open = num(1);
    run.rss_rest = num(2);
    run.rss_trimmed = num(3);
    run.rss_peak = num(4);
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
    std::snprintf(
        buf, sizeof buf, "phase\t%s\t%llu\t%llu\t%llu\t%.9f\t%llu\t%llu\t%llu\t%llu\t%llu",
        p.id.c_str(), static_cast<unsigned long long>(p.ops),
        static_cast<unsigned long long>(p.rows), static_cast<unsigned long long>(p.misses),
        p.seconds, static_cast<unsigned long long>(p.p50_ns),
        static_cast<unsigned long long>(p.p99_ns), static_cast<unsigned long long>(p.max_ns),
        static_cast<unsigned long long>(p.rss_after),
        static_cast<unsigned long long>(p.disk_after));
    out(buf);
  };
  s.counters = [out](const std::string& text) {
    if (!text.empty()) out("counters\t" + clean(text));
  };
  s.memory = [out](uint64_t open, uint64_t rest, uint64_t trimmed, uint64_t peak) {
    out("memory\t" + std::to_string(open) + "\t" + std::to_string(rest) + "\t" +
        std::to_string(trimmed) + "\t" + std::to_string(peak));
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

int main_impl(int argc, char** argv) {
  std::string markdown_file, json_file;
  const RunConfig config = parse_flags(argc, argv, markdown_file, json_file);
  std::filesystem::create_directories(config.dir);
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
  const Machine machine = describe_machine();
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
