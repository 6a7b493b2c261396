#include "commands.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "escape.h"
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

}  // namespace

int run_set(const Database& db, const std::string& key, const std::string& value,
            std::optional<uint64_t> at, bool versioned) {
  return with_tree("set", db, OpenMode{true, versioned}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin());
    SKV_RETURN_IF_ERROR(at ? tx.set_at(key, value, *at) : tx.set(key, value));
    return session.commit(tx);
  });
}

int run_get(const Database& db, const std::string& key, bool raw) {
  return with_tree("get", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    SKV_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.get(key));
    if (!value) return Status::not_found("key '" + escape(key) + "'");
    if (raw) {
      std::fwrite(value->data(), 1, value->size(), stdout);
    } else {
      print_line(escape(*value));
    }
    return Status::OK();
  });
}

int run_get_at(const Database& db, const std::string& key, uint64_t ts, bool raw) {
  return with_tree("get-at", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    SKV_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.get_at(key, ts));
    if (!value) {
      return Status::not_found("key '" + escape(key) + "' at " + std::to_string(ts));
    }
    if (raw) {
      std::fwrite(value->data(), 1, value->size(), stdout);
    } else {
      print_line(escape(*value));
    }
    return Status::OK();
  });
}

int run_history(const Database& db, const std::string& key, bool tombstones, uint64_t limit) {
  return with_tree("history", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
    HistoryOptions options;
    options.include_tombstones = tombstones;
    options.limit = static_cast<size_t>(std::min<uint64_t>(limit, SIZE_MAX));
    SKV_ASSIGN_OR_RETURN(std::vector<KeyVersion> versions, tx.history(key, options));
    for (const KeyVersion& v : versions) {
      const std::string ts = std::to_string(v.timestamp);
      print_line(v.tombstone ? ts + " deleted" : ts + '\t' + escape(v.value));
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

int run_scan(const Database& db, const ScanOptions& options) {
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
      std::string line = escape(it.key());
      if (!options.keys_only) {
        SKV_ASSIGN_OR_RETURN(std::string_view value, it.value());
        line += '\t';
        line += escape(value);
      }
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

int run_count(const Database& db, const KeyRange& key_range) {
  return with_tree("count", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    const auto range = bounds(key_range);
    uint64_t count = 0;
    if (range) {
      SKV_ASSIGN_OR_RETURN(Transaction tx, session.tree().begin_with_mode(Mode::ReadOnly));
      SKV_ASSIGN_OR_RETURN(count, tx.count(range->first, range->second));
    }
    std::printf("%" PRIu64 "\n", count);
    return Status::OK();
  });
}

int run_stats(const Database& db) {
  return with_tree("stats", db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    const TreeStats st = session.tree().stats();
    std::printf("path                 %s\n", escape(db.dir).c_str());
    std::printf("last_sequence        %" PRIu64 "\n", st.last_sequence);
    std::printf("memtable_bytes       %" PRIu64 "\n", st.memtable_bytes);
    std::printf("immutable_memtables  %d\n", st.immutable_memtables);
    std::printf("flushes              %" PRIu64 "\n", st.flushes);
    std::printf("compactions          %" PRIu64 "\n", st.compactions);
    std::printf("stalls               %" PRIu64 "\n", st.stalls);
    std::printf("block_cache_usage    %" PRIu64 "\n", st.block_cache_usage);
    const Versioning versioning = session.tree().versioning();
    if (versioning.enabled) {
      std::printf("versioning           on, retention_ns %" PRIu64 "\n", versioning.retention_ns);
    } else {
      std::printf("versioning           off\n");
    }
    std::printf("vlog_files           %" PRIu64 "\n", st.vlog_files);
    std::printf("vlog_bytes           %" PRIu64 "\n", st.vlog_bytes);
    std::printf("vlog_garbage_bytes   %" PRIu64 "\n", st.vlog_garbage_bytes);
    std::printf("level_count          %d\n", st.level_count);
    const int levels = std::clamp(st.level_count, 0, 16);
    for (int level = 0; level < levels; ++level) {
      std::printf("L%-2d files %-6d bytes %" PRIu64 "\n", level, st.files_per_level[level],
                  st.bytes_per_level[level]);
    }
    return Status::OK();
  });
}

int run_flush(const Database& db) {
  return with_tree("flush", db, OpenMode{}, [&](Session& session) -> Status {
    SKV_RETURN_IF_ERROR(session.wait(session.tree().flush()));
    std::printf("flushed %s\n", escape(db.dir).c_str());
    return Status::OK();
  });
}

int run_compact(const Database& db) {
  return with_tree("compact", db, OpenMode{}, [&](Session& session) -> Status {
    SKV_RETURN_IF_ERROR(session.tree().compact_all());
    std::printf("compacted %s\n", escape(db.dir).c_str());
    return Status::OK();
  });
}

int run_checkpoint(std::string_view command, const Database& db, const std::string& target) {
  // Read-only: the source keeps every byte, and its WAL is copied, so nothing is flushed.
  return with_tree(command, db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    SKV_RETURN_IF_ERROR(session.tree().checkpoint(target));
    std::printf("%s: %s -> %s\n", command == "restore" ? "restored" : "checkpoint", db.dir.c_str(),
                target.c_str());
    return Status();
  });
}

}  // namespace skv::cli
