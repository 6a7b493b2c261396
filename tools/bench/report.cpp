#include "report.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace skv::bench {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// 1234567 -> "1,234,567".
std::string thousands(uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[i]);
    if ((n - i - 1) % 3 == 0 && i + 1 < n) out.push_back(',');
  }
  return out;
}

std::string rate(double per_second) {
  if (per_second < 100) return format("%.1f", per_second);
  return thousands(static_cast<uint64_t>(per_second + 0.5));
}

std::string micros(uint64_t ns) {
  const double us = static_cast<double>(ns) / 1000.0;
  if (us < 10) return format("%.1f", us);
  return thousands(static_cast<uint64_t>(us + 0.5));
}

std::string mib(uint64_t bytes) {
  return format("%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

double ops_per_second(const PhaseResult& p) {
  return p.seconds > 0 ? static_cast<double>(p.ops) / p.seconds : 0;
}

const PhaseResult* find_phase(const EngineRun& run, const std::string& id) {
  for (const PhaseResult& p : run.phases) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

const EngineRun* find_engine(const std::vector<EngineRun>& runs, const std::string& key) {
  for (const EngineRun& r : runs) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return format("%.6g", v); }

}  // namespace

Machine describe_machine() {
  Machine m;
  m.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  m.memory_bytes =
      static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  struct utsname u;
  if (uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) m.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  return m;
}

EngineRun combine_rounds(const std::vector<EngineRun>& rounds) {
  EngineRun out = rounds.front();
  if (rounds.size() == 1) return out;
  auto median = [](std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<uint64_t> open, rest, trimmed, peak, disk_rest;
  for (const EngineRun& r : rounds) {
    if (out.error.empty() && !r.error.empty()) out.error = r.error;
    open.push_back(r.rss_open);
    rest.push_back(r.rss_rest);
    trimmed.push_back(r.rss_trimmed);
    peak.push_back(r.rss_peak);
    disk_rest.push_back(r.disk_rest);
  }
  out.rss_open = median(open);
  out.rss_rest = median(rest);
  out.rss_trimmed = median(trimmed);
  out.rss_peak = median(peak);
  out.disk_rest = median(disk_rest);
  for (PhaseResult& p : out.phases) {
    std::vector<const PhaseResult*> all;
    for (const EngineRun& r : rounds) {
      if (const PhaseResult* q = find_phase(r, p.id)) all.push_back(q);
    }
    std::sort(all.begin(), all.end(), [](const PhaseResult* a, const PhaseResult* b) {
      return ops_per_second(*a) < ops_per_second(*b);
    });
    std::vector<double>& rates = out.round_rates[p.id];
    for (const EngineRun& r : rounds) {
      if (const PhaseResult* q = find_phase(r, p.id)) rates.push_back(ops_per_second(*q));
    }
    p = *all[all.size() / 2];
  }
  return out;
}

const std::vector<std::string>& phase_ids(const std::string& workload) {
  static const std::vector<std::string> large = {"create", "update1", "update2", "read",
                                                 "scan",   "gc",      "delete"};
  if (workload == "large") return large;
  static const std::vector<std::string> ids = {"create",           "read",
                                               "update",           "scan_count",
                                               "scan_keys",        "scan_pairs",
                                               "scan_skip_keys",   "scan_skip_pairs",
                                               "delete",           "batch_create_100",
                                               "batch_read_100",   "batch_update_100",
                                               "batch_delete_100", "batch_create_1000",
                                               "batch_read_1000",  "batch_update_1000",
                                               "batch_delete_1000"};
  return ids;
}

std::string phase_title(const std::string& id) {
  static const std::map<std::string, std::string> titles = {
      {"create", "create"},
      {"read", "read"},
      {"update", "update"},
      {"update1", "update 1"},
      {"update2", "update 2"},
      {"scan", "scan: all pairs"},
      {"gc", "gc"},
      {"scan_count", "scan: count all"},
      {"scan_keys", "scan: 100 keys"},
      {"scan_pairs", "scan: 100 pairs"},
      {"scan_skip_keys", "scan: skip 5,000, 100 keys"},
      {"scan_skip_pairs", "scan: skip 5,000, 100 pairs"},
      {"delete", "delete"},
      {"batch_create_100", "batch create 100"},
      {"batch_read_100", "batch read 100"},
      {"batch_update_100", "batch update 100"},
      {"batch_delete_100", "batch delete 100"},
      {"batch_create_1000", "batch create 1,000"},
      {"batch_read_1000", "batch read 1,000"},
      {"batch_update_1000", "batch update 1,000"},
      {"batch_delete_1000", "batch delete 1,000"},
  };
  auto it = titles.find(id);
  return it == titles.end() ? id : it->second;
}

namespace {

// Write amplification: bytes written to storage per byte of user data, or "-" without user data.
std::string amplification(uint64_t written, uint64_t user) {
  if (user == 0) return "-";
  return format("%.2f", static_cast<double>(written) / static_cast<double>(user));
}

void render_header(std::ostringstream& o, const RunConfig& config, const Machine& machine) {
  const uint64_t batch_rows = config.batch_rows ? config.batch_rows : config.n;
  if (config.workload == "large") {
    o << "skv_bench --workload large: N = " << thousands(config.n) << " rows of "
      << thousands(config.value_size) << "-byte values, " << config.clients << " clients, sync "
      << (config.sync ? "on" : "off") << ", block cache " << mib(config.cache_bytes)
      << ", value log and blob files from " << thousands(config.value_threshold) << " bytes, "
      << config.count_repeats << (config.count_repeats == 1 ? " full scan" : " full scans");
  } else {
    o << "skv_bench: N = " << thousands(config.n) << ", " << config.clients << " clients, sync "
      << (config.sync ? "on" : "off") << ", block cache " << mib(config.cache_bytes) << ", "
      << thousands(batch_rows) << " rows per batch phase, " << config.scan_repeats
      << " runs of each 100-row scan, " << config.count_repeats << " of the full count";
  }
  o << (config.settle_phases
            ? "; each phase starts once the engine's flushes and compactions are done"
            : "; phases follow each other with no wait");
  if (config.rounds > 1) {
    o << "; " << config.rounds
      << " rounds, engines interleaved, each figure from the round with the median ops/s";
  }
  o << ".\n";
  o << "Machine: " << machine.cpus << " CPUs (" << machine.cpu_model << "), "
    << mib(machine.memory_bytes) << ", " << machine.kernel << ".\n\n";
}

// The large workload's throughput is in rows (a scan visits N rows); the crud workload's in
// operations.
double throughput(const RunConfig& config, const PhaseResult& p) {
  if (config.workload != "large") return ops_per_second(p);
  return p.seconds > 0 ? static_cast<double>(p.rows) / p.seconds : 0;
}

void render_throughput(std::ostringstream& o, const RunConfig& config,
                       const std::vector<EngineRun>& runs) {
  const EngineRun* skv = find_engine(runs, "skv");
  const EngineRun* rocks = find_engine(runs, "rocksdb");
  const bool large = config.workload == "large";
  const bool ratio = !large && skv != nullptr && rocks != nullptr;
  if (large) {
    o << "Throughput in rows per second (a row is one single-row transaction; a full scan "
         "visits N rows). Higher is better.\n\n";
  } else {
    o << "Throughput in operations per second (an operation is one transaction: one row, or "
         "one batch of 100 or 1,000 rows; for scans, one scan). Higher is better.\n\n";
  }
  o << "| phase |";
  for (const EngineRun& r : runs) o << " " << r.name << " |";
  if (ratio) o << " skv / RocksDB |";
  o << "\n| --- |";
  for (size_t i = 0; i < runs.size(); ++i) o << " ---: |";
  if (ratio) o << " ---: |";
  o << "\n";
  for (const std::string& id : phase_ids(config.workload)) {
    if (id == "gc") continue;  // one operation: its time is in the space table
    bool any = false;
    for (const EngineRun& r : runs) any = any || find_phase(r, id) != nullptr;
    if (!any) continue;
    o << "| " << phase_title(id) << " |";
    for (const EngineRun& r : runs) {
      const PhaseResult* p = find_phase(r, id);
      o << " " << (p ? rate(throughput(config, *p)) : "-") << " |";
    }
    if (ratio) {
      const PhaseResult* a = find_phase(*skv, id);
      const PhaseResult* b = find_phase(*rocks, id);
      if (a && b && ops_per_second(*b) > 0) {
        o << " " << format("%.2f", ops_per_second(*a) / ops_per_second(*b)) << " |";
      } else {
        o << " - |";
      }
    }
    o << "\n";
  }
}

void render_latency(std::ostringstream& o, const RunConfig& config,
                    const std::vector<EngineRun>& runs) {
  o << "\nLatency of one operation, p50 / p99 / max, in microseconds. Lower is better.\n\n";
  o << "| phase |";
  for (const EngineRun& r : runs) o << " " << r.name << " |";
  o << "\n| --- |";
  for (size_t i = 0; i < runs.size(); ++i) o << " ---: |";
  o << "\n";
  for (const std::string& id : phase_ids(config.workload)) {
    if (id == "gc") continue;
    bool any = false;
    for (const EngineRun& r : runs) any = any || find_phase(r, id) != nullptr;
    if (!any) continue;
    o << "| " << phase_title(id) << " |";
    for (const EngineRun& r : runs) {
      const PhaseResult* p = find_phase(r, id);
      if (p) {
        o << " " << micros(p->p50_ns) << " / " << micros(p->p99_ns) << " / " << micros(p->max_ns)
          << " |";
      } else {
        o << " - |";
      }
    }
    o << "\n";
  }
}

// The large workload: bytes written to storage per phase, write amplification, and space
// amplification after the updates and after the gc step.
void render_amplification(std::ostringstream& o, const RunConfig& config,
                          const std::vector<EngineRun>& runs) {
  o << "\nWrite amplification: bytes the engine's process wrote to storage (/proc/self/io "
       "write_bytes, background threads included) per byte of keys and values written; in the "
       "phase / from the open to the end of the phase. Lower is better.\n\n";
  o << "| phase | user data written |";
  for (const EngineRun& r : runs) o << " " << r.name << " |";
  o << "\n| --- | ---: |";
  for (size_t i = 0; i < runs.size(); ++i) o << " ---: |";
  o << "\n";
  for (const std::string& id : phase_ids(config.workload)) {
    const PhaseResult* first = nullptr;
    for (const EngineRun& r : runs) {
      if (first == nullptr) first = find_phase(r, id);
    }
    if (first == nullptr) continue;
    o << "| " << phase_title(id) << " | " << mib(first->user_bytes) << " |";
    for (const EngineRun& r : runs) {
      const PhaseResult* p = find_phase(r, id);
      if (p) {
        o << " " << amplification(p->disk_written, p->user_bytes) << " / "
          << amplification(p->disk_written_total, p->user_bytes_total) << " |";
      } else {
        o << " - |";
      }
    }
    o << "\n";
  }

  o << "\nBytes written to storage in each phase.\n\n";
  o << "| phase |";
  for (const EngineRun& r : runs) o << " " << r.name << " |";
  o << "\n| --- |";
  for (size_t i = 0; i < runs.size(); ++i) o << " ---: |";
  o << "\n";
  for (const std::string& id : phase_ids(config.workload)) {
    bool any = false;
    for (const EngineRun& r : runs) any = any || find_phase(r, id) != nullptr;
    if (!any) continue;
    o << "| " << phase_title(id) << " |";
    for (const EngineRun& r : runs) {
      const PhaseResult* p = find_phase(r, id);
      o << " " << (p ? mib(p->disk_written) : "-") << " |";
    }
    o << "\n";
  }

  const uint64_t live = config.n * (kKeySize + config.value_size);
  o << "\nSpace amplification: the database directory's size (sum of its files' sizes) over the "
       "live user data (N keys and values, "
    << mib(live)
    << "), after the second update and after the gc step (a full compaction, and "
       "the garbage collection of value logs and blob files). Lower is better.\n\n";
  o << "| engine | size after update 2 | space amp. | gc time | size after gc | space amp. after "
       "gc | size after delete |\n";
  o << "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  const auto ratio = [live](uint64_t bytes) {
    return format("%.2f", static_cast<double>(bytes) / static_cast<double>(live));
  };
  for (const EngineRun& r : runs) {
    const PhaseResult* updated = find_phase(r, "update2");
    const PhaseResult* gc = find_phase(r, "gc");
    const PhaseResult* deleted = find_phase(r, "delete");
    o << "| " << r.name << " | " << (updated ? mib(updated->files_after) : "-") << " | "
      << (updated ? ratio(updated->files_after) : "-") << " | "
      << (gc ? format("%.2f s", gc->seconds) : "-") << " | " << (gc ? mib(gc->files_after) : "-")
      << " | " << (gc ? ratio(gc->files_after) : "-") << " | "
      << (deleted ? mib(deleted->files_after) : "-") << " |\n";
  }
}

void render_memory(std::ostringstream& o, const std::vector<EngineRun>& runs) {
  o << "\nMemory (resident set of the process that ran the engine, one process per engine) "
       "and disk (the database directory: at end right after the last phase, at rest after the "
       "settle pause, still open).\n\n";
  o << "| engine | RSS after open | RSS after read (N rows) | RSS at rest (end) | at rest, trimmed "
       "| peak RSS | "
       "disk after create | "
       "disk at end | disk at rest |\n";
  o << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const EngineRun& r : runs) {
    const PhaseResult* created = find_phase(r, "create");
    const PhaseResult* read = find_phase(r, "read");
    o << "| " << r.name << " | " << mib(r.rss_open) << " | " << (read ? mib(read->rss_after) : "-")
      << " | " << mib(r.rss_rest) << " | " << mib(r.rss_trimmed) << " | " << mib(r.rss_peak)
      << " | " << (created ? mib(created->disk_after) : "-") << " | "
      << (r.phases.empty() ? "-" : mib(r.phases.back().disk_after)) << " | " << mib(r.disk_rest)
      << " |\n";
  }
}

}  // namespace

// With --sync on, for each engine that counts its commits and syncs: per write phase, commits per
// WAL sync and syncs per second, beside the device's own fdatasync rate.
void render_group_commit(std::ostringstream& o, const RunConfig& config, const Machine& machine,
                         const std::vector<EngineRun>& runs) {
  if (!config.sync) return;
  for (const EngineRun& r : runs) {
    bool any = false;
    for (const PhaseResult& p : r.phases) any = any || p.wal_syncs > 0;
    if (!any) continue;
    o << "\n"
      << r.name << ": group commit with durable commits. This device did "
      << (machine.fdatasync_per_second > 0
              ? thousands(static_cast<uint64_t>(machine.fdatasync_per_second + 0.5))
              : std::string("(not measured)"))
      << " fdatasync() calls per second of 4 KiB writes in the same directory, measured "
         "before the run.\n\n";
    o << "| phase | commits | WAL syncs | commits per sync | syncs per second | "
         "syncs / device rate |\n| --- | ---: | ---: | ---: | ---: | ---: |\n";
    for (const PhaseResult& p : r.phases) {
      if (p.wal_syncs == 0) continue;
      const double per_sync = static_cast<double>(p.commits) / static_cast<double>(p.wal_syncs);
      const double per_second = p.seconds > 0 ? static_cast<double>(p.wal_syncs) / p.seconds : 0;
      char buf[64];
      o << "| " << phase_title(p.id) << " | " << thousands(p.commits) << " | "
        << thousands(p.wal_syncs) << " | ";
      std::snprintf(buf, sizeof buf, "%.1f", per_sync);
      o << buf << " | " << thousands(static_cast<uint64_t>(per_second + 0.5)) << " | ";
      if (machine.fdatasync_per_second > 0) {
        std::snprintf(buf, sizeof buf, "%.2f", per_second / machine.fdatasync_per_second);
        o << buf;
      } else {
        o << "-";
      }
      o << " |\n";
    }
  }
}

std::string render_markdown(const RunConfig& config, const Machine& machine,
                            const std::vector<EngineRun>& all) {
  std::ostringstream o;
  render_header(o, config, machine);
  const std::vector<EngineRun>& runs = all;
  render_throughput(o, config, runs);
  render_latency(o, config, runs);
  if (config.workload == "large") render_amplification(o, config, runs);
  render_memory(o, runs);
  render_group_commit(o, config, machine, runs);

  for (const EngineRun& r : runs) {
    if (!r.counters.empty()) o << "\n" << r.name << " counters at the end: " << r.counters << ".\n";
  }

  bool notes = false;
  for (const EngineRun& r : all) {
    uint64_t misses = 0;
    for (const PhaseResult& p : r.phases) misses += p.misses;
    if (r.error.empty() && misses == 0) continue;
    if (!notes) o << "\n";
    notes = true;
    if (!r.error.empty()) o << "- " << r.name << " failed: " << r.error << "\n";
    for (const PhaseResult& p : r.phases) {
      if (p.misses) {
        o << "- " << r.name << ", " << phase_title(p.id) << ": " << p.misses
          << " reads or scans came back short\n";
      }
    }
  }
  return o.str();
}

std::string render_json(const RunConfig& config, const Machine& machine,
                        const std::vector<EngineRun>& runs) {
  std::ostringstream o;
  const uint64_t batch_rows = config.batch_rows ? config.batch_rows : config.n;
  o << "{\n  \"config\": {\"workload\": " << json_string(config.workload) << ", \"n\": " << config.n
    << ", \"clients\": " << config.clients << ", \"rounds\": " << config.rounds
    << ", \"sync\": " << (config.sync ? "true" : "false")
    << ", \"cache_bytes\": " << config.cache_bytes << ", \"batch_rows\": " << batch_rows
    << ", \"scan_repeats\": " << config.scan_repeats
    << ", \"count_repeats\": " << config.count_repeats << ", \"value_size\": " << config.value_size
    << ", \"value_threshold\": " << config.value_threshold
    << ", \"settle_phases\": " << (config.settle_phases ? "true" : "false")
    << ", \"separate_processes\": " << (config.fork ? "true" : "false") << "},\n";
  o << "  \"machine\": {\"cpus\": " << machine.cpus
    << ", \"cpu_model\": " << json_string(machine.cpu_model)
    << ", \"kernel\": " << json_string(machine.kernel)
    << ", \"memory_bytes\": " << machine.memory_bytes
    << ", \"fdatasync_per_second\": " << json_number(machine.fdatasync_per_second) << "},\n";
  o << "  \"engines\": [";
  for (size_t e = 0; e < runs.size(); ++e) {
    const EngineRun& r = runs[e];
    o << (e ? "," : "") << "\n    {\"key\": " << json_string(r.key)
      << ", \"name\": " << json_string(r.name) << ", \"durability\": " << json_string(r.durability)
      << ", \"error\": " << (r.error.empty() ? "null" : json_string(r.error))
      << ", \"counters\": " << json_string(r.counters)
      << ",\n     \"memory\": {\"rss_open\": " << r.rss_open << ", \"rss_rest\": " << r.rss_rest
      << ", \"rss_trimmed\": " << r.rss_trimmed << ", \"rss_peak\": " << r.rss_peak
      << ", \"disk_rest\": " << r.disk_rest << "},\n     \"phases\": [";
    for (size_t i = 0; i < r.phases.size(); ++i) {
      const PhaseResult& p = r.phases[i];
      o << (i ? "," : "") << "\n      {\"id\": " << json_string(p.id) << ", \"ops\": " << p.ops
        << ", \"rows\": " << p.rows << ", \"misses\": " << p.misses
        << ", \"seconds\": " << json_number(p.seconds)
        << ", \"ops_per_second\": " << json_number(ops_per_second(p)) << ", \"rows_per_second\": "
        << json_number(p.seconds > 0 ? static_cast<double>(p.rows) / p.seconds : 0)
        << ", \"p50_ns\": " << p.p50_ns << ", \"p99_ns\": " << p.p99_ns
        << ", \"max_ns\": " << p.max_ns << ", \"rss_after\": " << p.rss_after
        << ", \"disk_after\": " << p.disk_after << ", \"files_after\": " << p.files_after
        << ", \"user_bytes\": " << p.user_bytes << ", \"disk_written\": " << p.disk_written
        << ", \"user_bytes_total\": " << p.user_bytes_total
        << ", \"disk_written_total\": " << p.disk_written_total << ", \"commits\": " << p.commits
        << ", \"wal_syncs\": " << p.wal_syncs
        << ", \"settle_seconds\": " << json_number(p.settle_seconds);
      auto rates = r.round_rates.find(p.id);
      if (rates != r.round_rates.end()) {
        o << ", \"ops_per_second_rounds\": [";
        for (size_t k = 0; k < rates->second.size(); ++k) {
          o << (k ? ", " : "") << json_number(rates->second[k]);
        }
        o << "]";
      }
      o << "}";
    }
    o << "]}";
  }
  o << "\n  ],\n  \"skv_over_rocksdb\": {";
  const EngineRun* skv = find_engine(runs, "skv");
  const EngineRun* rocks = find_engine(runs, "rocksdb");
  bool first = true;
  if (skv && rocks) {
    for (const std::string& id : phase_ids(config.workload)) {
      const PhaseResult* a = find_phase(*skv, id);
      const PhaseResult* b = find_phase(*rocks, id);
      if (!a || !b || ops_per_second(*b) <= 0) continue;
      o << (first ? "" : ", ") << json_string(id) << ": "
        << json_number(ops_per_second(*a) / ops_per_second(*b));
      first = false;
    }
  }
  o << "}\n}\n";
  return o.str();
}

}  // namespace skv::bench
