#include "commands.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "escape.h"
#include "progress.h"
#include "session.h"
#include "skv/skv.h"
#include "util/status_macros.h"

namespace skv::cli {

namespace {

// The smallest key greater than every key that starts with `prefix`; empty when there is none
// (the prefix is all 0xff bytes), meaning "to the last key".
std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    const auto last = static_cast<unsigned char>(prefix.back());
    if (last != 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

// [start, end) of a KeyRange, with empty meaning unbounded. Returns nullopt for an empty range.
std::optional<std::pair<std::string, std::string>> bounds(const KeyRange& range) {
  std::string start = range.start;
  std::string end = range.end;
  if (!range.prefix.empty()) {
    start = std::max(start, range.prefix);
    const std::string pend = prefix_end(range.prefix);
    if (!pend.empty() && (end.empty() || pend < end)) end = pend;
  }
  if (!end.empty() && start >= end) return std::nullopt;
  return std::make_pair(start, end);
}

void print_line(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

// A key or value as text output shows it: hex with --hex, else escaped (escape.h).
std::string show(const OutputOptions& out, std::string_view bytes) {
  return out.hex ? to_hex(bytes) : escape(bytes);
}

// Prints a value: the stored bytes with `raw`, else one line (text) or `json` (an object).
void print_value(const OutputOptions& out, std::string_view value, bool raw,
                 const std::string& json) {
  if (raw) {
    std::fwrite(value.data(), 1, value.size(), stdout);
  } else if (out.json) {
    print_line(json);
  } else {
    print_line(show(out, value));
  }
}

}  // namespace

int run_set(const Database& db, const std::string& key, const std::string& value,
            std::optional<uint64_t> at, bool versioned) {
  return with_tree("set", db, OpenMode{true, versioned}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin());
    SKV_RETURN_IF_ERROR(at ? tx.set_at(key, value, *at) : tx.set(key, value));
    return session.commit(tx);
  });
}

int run_get(const Database& db, const OutputOptions& out, const std::string& key, bool raw) {
  return with_tree("get", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    SKV_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.get(key));
    if (!value) return Status::not_found("key '" + show(out, key) + "'");
    print_value(
        out, *value, raw,
        "{" + json_field("key", key, out.hex) + "," + json_field("value", *value, out.hex) + "}");
    return Status::OK();
  });
}

int run_get_at(const Database& db, const OutputOptions& out, const std::string& key, uint64_t ts,
               bool raw) {
  return with_tree("get-at", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    SKV_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.get_at(key, ts));
    if (!value) {
      return Status::not_found("key '" + show(out, key) + "' at " + std::to_string(ts));
    }
    print_value(out, *value, raw,
                "{" + json_field("key", key, out.hex) + ",\"timestamp\":" + std::to_string(ts) +
                    "," + json_field("value", *value, out.hex) + "}");
    return Status::OK();
  });
}

int run_history(const Database& db, const OutputOptions& out, const std::string& key,
                bool tombstones, uint64_t limit) {
  return with_tree("history", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    HistoryOptions options;
    options.include_tombstones = tombstones;
    options.limit = static_cast<size_t>(std::min<uint64_t>(limit, SIZE_MAX));
    SKV_ASSIGN_OR_RETURN(std::vector<KeyVersion> versions, tx.history(key, options));
    for (const KeyVersion& v : versions) {
      const std::string ts = std::to_string(v.timestamp);
      if (out.json) {
        print_line("{\"timestamp\":" + ts +
                   (v.tombstone ? ",\"deleted\":true}"
                                : "," + json_field("value", v.value, out.hex) + "}"));
      } else {
        print_line(v.tombstone ? ts + " deleted" : ts + '\t' + show(out, v.value));
      }
    }
    return Status::OK();
  });
}

int run_del(const Database& db, const std::string& key) {
  return with_tree("del", db, OpenMode{}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin());
    SKV_RETURN_IF_ERROR(tx.del(key));
    return session.commit(tx);
  });
}

int run_scan(const Database& db, const OutputOptions& out, const ScanOptions& options) {
  return with_tree("scan", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    const auto range = bounds(options.range);
    if (!range) return Status::OK();
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    const auto open_iterator = [&](const std::string& start,
                                   const std::string& end) -> Result<Iterator> {
      if (options.at) {
        return options.keys_only ? tx.keys_at(start, end, *options.at)
                                 : tx.range_at(start, end, *options.at);
      }
      return options.keys_only ? tx.keys(start, end) : tx.range(start, end);
    };
    SKV_ASSIGN_OR_RETURN(Iterator it, open_iterator(range->first, range->second));
    if (options.reverse) {
      it.seek_last();
    } else {
      it.seek_first();
    }
    for (uint64_t n = 0; it.valid() && (options.limit == 0 || n < options.limit); ++n) {
      std::string line =
          out.json ? "{" + json_field("key", it.key(), out.hex) : show(out, it.key());
      if (!options.keys_only) {
        SKV_ASSIGN_OR_RETURN(std::string_view value, it.value());
        line += out.json ? "," + json_field("value", value, out.hex) : "\t" + show(out, value);
      }
      if (out.json) line += "}";
      print_line(line);
      if (options.reverse) {
        it.prev();
      } else {
        it.next();
      }
    }
    return it.status();
  });
}

int run_count(const Database& db, const OutputOptions& out, const KeyRange& key_range) {
  return with_tree("count", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    const auto range = bounds(key_range);
    uint64_t count = 0;
    if (range) {
      SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
      SKV_ASSIGN_OR_RETURN(count, tx.count(range->first, range->second));
    }
    if (out.json) {
      std::printf("{\"count\":%" PRIu64 "}\n", count);
    } else {
      std::printf("%" PRIu64 "\n", count);
    }
    return Status::OK();
  });
}

int run_flush(const Database& db, const OutputOptions& out) {
  return with_tree("flush", db, OpenMode{}, [&](Session& session) -> Status {
    SKV_RETURN_IF_ERROR(session.wait(session.tree().flush()));
    if (out.json) {
      print_line("{" + json_field("flushed", db.dir, false) + "}");
    } else {
      std::printf("flushed %s\n", escape(db.dir).c_str());
    }
    return Status::OK();
  });
}

int run_compact(const Database& db, const OutputOptions& out) {
  return with_tree("compact", db, OpenMode{}, [&](Session& session) -> Status {
    SKV_RETURN_IF_ERROR(session.tree().compact_all());
    if (out.json) {
      print_line("{" + json_field("compacted", db.dir, false) + "}");
    } else {
      std::printf("compacted %s\n", escape(db.dir).c_str());
    }
    return Status::OK();
  });
}

int run_checkpoint(std::string_view command, const Database& db, const OutputOptions& out,
                   const std::string& target) {
  // Read-only: the source keeps every byte, and its WAL is copied, so nothing is flushed.
  return with_tree(command, db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_RETURN_IF_ERROR(session.tree().checkpoint(target));
    if (out.json) {
      print_line("{" + json_field("source", db.dir, false) + "," +
                 json_field(command == "restore" ? "restored" : "checkpoint", target, false) + "}");
    } else {
      std::printf("%s: %s -> %s\n", command == "restore" ? "restored" : "checkpoint",
                  escape(db.dir).c_str(), escape(target).c_str());
    }
    return Status();
  });
}

int run_verify(const Database& db, const OutputOptions& out) {
  VerifyReport report;
  const int rc =
      with_tree("verify", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
        ProgressBar bar("verify");
        VerifyOptions options;
        options.progress = [&](uint64_t done, uint64_t total) { bar.update(done, total); };
        SKV_ASSIGN_OR_RETURN(report, session.tree().verify(options));
        return Status::OK();
      });
  if (rc != kExitOk) return rc;
  if (out.json) {
    std::string files;
    for (const VerifiedFile& f : report.files) {
      if (!files.empty()) files += ",";
      files += "{" + json_field("name", f.name, false) + "," + json_field("kind", f.kind, false) +
               ",\"bytes\":" + std::to_string(f.bytes) + ",\"units\":" + std::to_string(f.units) +
               "," + json_field("status", code_name(f.status.code()), false);
      if (!f.status.ok()) files += "," + json_field("message", f.status.message(), false);
      if (!f.note.empty()) files += "," + json_field("note", f.note, false);
      files += "}";
    }
    print_line("{\"files\":[" + files + "],\"bytes\":" + std::to_string(report.bytes) +
               ",\"damaged\":" + std::to_string(report.damaged()) + "}");
  } else {
    for (const VerifiedFile& f : report.files) {
      const char* unit = f.kind == "wal" || f.kind == "manifest" ? "records"
                         : f.kind == "current"                   ? "line"
                                                                 : "entries";
      if (f.status.ok()) {
        std::printf("ok       %-10s %-16s %12" PRIu64 " bytes %10" PRIu64 " %s%s%s\n",
                    f.kind.c_str(), f.name.c_str(), f.bytes, f.units, unit,
                    f.note.empty() ? "" : "; ", f.note.c_str());
      } else {
        std::printf("DAMAGED  %-10s %-16s %s: %s\n", f.kind.c_str(), f.name.c_str(),
                    code_name(f.status.code()), f.status.message().c_str());
      }
    }
    std::printf(
        "verified %zu files, %s: %s\n", report.files.size(), mib(report.bytes).c_str(),
        report.ok() ? "no damage" : (std::to_string(report.damaged()) + " damaged").c_str());
  }
  if (!report.ok()) {
    print_error("verify", Status::corruption(db.dir + ": " + std::to_string(report.damaged()) +
                                             " damaged file(s)"));
    return kExitFailed;
  }
  return kExitOk;
}

namespace {

constexpr std::string_view kDumpText = "skv-dump 1 text";
constexpr std::string_view kDumpHex = "skv-dump 1 hex";

}  // namespace

int run_dump(const Database& db, const KeyRange& key_range, bool hex) {
  return with_tree("dump", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    print_line(hex ? kDumpHex : kDumpText);
    const auto range = bounds(key_range);
    if (!range) return Status::OK();
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    SKV_ASSIGN_OR_RETURN(Iterator it, tx.range(range->first, range->second));
    const OutputOptions out{false, hex};
    for (it.seek_first(); it.valid(); it.next()) {
      SKV_ASSIGN_OR_RETURN(std::string_view value, it.value());
      print_line(show(out, it.key()) + "\t" + show(out, value));
    }
    SKV_RETURN_IF_ERROR(it.status());
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      return Status::io_error("standard output: write failed");
    }
    return Status::OK();
  });
}

int run_load(const Database& db, const std::string& input, uint64_t batch_rows) {
  std::ifstream file;
  std::istream* in = &std::cin;
  uint64_t total = 0;
  if (input != "-") {
    file.open(input, std::ios::binary);
    if (!file) {
      print_error("load", Status::not_found(input + ": cannot be opened"));
      return kExitNotFound;
    }
    file.seekg(0, std::ios::end);
    total = static_cast<uint64_t>(std::max<std::streamoff>(0, file.tellg()));
    file.seekg(0);
    in = &file;
  }
  const std::string label = input == "-" ? "standard input" : input;
  std::string line;
  uint64_t line_number = 1, read = 0;
  bool hex = false;
  // The header and the first batch are read and checked before the database is opened, so a
  // refused input creates nothing.
  Status header = [&]() -> Status {
    if (!std::getline(*in, line) || (line != kDumpText && line != kDumpHex)) {
      return Status::invalid_argument(label + ": line 1 is not \"" + std::string(kDumpText) +
                                      "\" or \"" + std::string(kDumpHex) + "\"");
    }
    hex = line == kDumpHex;
    read = line.size() + 1;
    return Status::OK();
  }();
  // Reads up to batch_rows lines into *rows; an empty *rows at the end of the input.
  using Rows = std::vector<std::pair<std::string, std::string>>;
  auto next_batch = [&](Rows* rows) -> Status {
    rows->clear();
    while (rows->size() < batch_rows && std::getline(*in, line)) {
      ++line_number;
      read += line.size() + 1;
      const std::string where = label + ": line " + std::to_string(line_number);
      const size_t tab = line.find('\t');
      if (tab == std::string::npos || line.find('\t', tab + 1) != std::string::npos) {
        return Status::invalid_argument(where + ": not 'key<TAB>value'");
      }
      const std::string_view k(line.data(), tab);
      const std::string_view v(line.data() + tab + 1, line.size() - tab - 1);
      Result<std::string> key = hex ? from_hex(k) : unescape(k);
      Result<std::string> value = hex ? from_hex(v) : unescape(v);
      if (!key.ok()) return key.status().with_context(where);
      if (!value.ok()) return value.status().with_context(where);
      if (key->empty() || key->size() > kMaxKeySize || value->size() > kMaxValueSize) {
        return Status::invalid_argument(where +
                                        ": the key is empty or too long, or the value "
                                        "too long");
      }
      rows->emplace_back(std::move(key).value(), std::move(value).value());
    }
    if (in->bad()) return Status::io_error(label + ": read failed");
    return Status::OK();
  };
  Rows rows;
  if (header.ok()) header = next_batch(&rows);
  if (!header.ok()) {
    print_error("load", header);
    return exit_code(header);
  }
  uint64_t keys = 0, batches = 0;
  const int rc = with_tree("load", db, OpenMode{.create = true}, [&](Session& session) -> Status {
    ProgressBar bar("load");
    while (!rows.empty()) {
      SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::WriteOnly));
      for (const auto& [key, value] : rows) SKV_RETURN_IF_ERROR(tx.set(key, value));
      SKV_RETURN_IF_ERROR(session.commit(tx));
      keys += rows.size();
      ++batches;
      bar.update(read, total);
      SKV_RETURN_IF_ERROR(next_batch(&rows));
    }
    return Status::OK();
  });
  std::fprintf(stderr, "skv: load: %" PRIu64 " keys in %" PRIu64 " batches%s\n", keys, batches,
               rc == kExitOk ? "" : " before the error");
  return rc;
}

}  // namespace skv::cli
