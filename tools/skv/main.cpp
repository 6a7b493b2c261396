// skv: the command-line tool. Parses the command line and runs one command (commands.h).
// Exit status: 0 success, 1 the operation failed (Status printed), 2 bad usage.
// The key of an encrypted database comes from --key-file, else from the environment variable
// SKV_KEY_FILE (a path, never a key); the key itself is never printed.

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "escape.h"
#include "skv/encryption.h"
#include "skv/options.h"

namespace {

constexpr char kUsage[] =
    "usage: skv <command> <dir> [arguments]\n"
    "\n"
    "commands:\n"
    "  demo <dir>                 write sample users, read and scan them, show a conflict\n"
    "  set <dir> <key> <value> [--at TS] [--versioned]\n"
    "                             set a key (durable when the command returns); --at: stamped\n"
    "                             with timestamp TS; --versioned: create a missing database\n"
    "                             versioned (keeping every version), or insist that it is\n"
    "  get <dir> <key> [--raw]    print a value (--raw: the bytes as stored, no newline)\n"
    "  get-at <dir> <key> <TS> [--raw]\n"
    "                             print the value the key had at timestamp TS\n"
    "  history <dir> <key> [--tombstones] [--limit N]\n"
    "                             print the key's versions, newest first: 'TS<TAB>value' lines,\n"
    "                             and with --tombstones 'TS deleted' for each delete\n"
    "  del <dir> <key>            delete a key\n"
    "  scan <dir> [--prefix P] [--start S] [--end E] [--reverse] [--limit N] [--keys-only]\n"
    "       [--at TS]             print 'key<TAB>value' lines in key order ([S, E) and/or P);\n"
    "                             --at: the database as it was at timestamp TS\n"
    "  count <dir> [--prefix P] [--start S] [--end E]\n"
    "                             print the number of keys\n"
    "  stats <dir>                print the tree's counters and level shape\n"
    "  flush <dir>                write the memtable to a table\n"
    "  compact <dir>              compact every level down\n"
    "  checkpoint <dir> <target>  copy the database into <target>, a path where nothing is yet;\n"
    "                             the copy opens as a database (hard links where possible)\n"
    "  restore <checkpoint> <dir> make <dir>, a path where nothing is yet, a database from a\n"
    "                             checkpoint\n"
    "  enc-info <dir>             show how each file is sealed (cipher, key id, database id),\n"
    "                             read from the file headers; needs no key, writes nothing\n"
    "\n"
    "get, get-at, history, scan, count, stats, checkpoint and restore open the database\n"
    "read-only: they change none of its bytes, and may run while other readers do (not while a\n"
    "writer has it open).\n"
    "\n"
    "Encryption (every command but enc-info):\n"
    "  --key-file PATH            the database's key: a file of 32 raw bytes or 64 hex digits\n"
    "                             that only its owner may read (chmod 600); without the option,\n"
    "                             the path in SKV_KEY_FILE, if set. A database created with a\n"
    "                             key (by set or demo) is encrypted, one created without is not\n"
    "  --key-id N                 the key id the key is held under (default 1)\n"
    "  --cipher C                 set, demo: the cipher of a new database, xchacha20-poly1305\n"
    "                             (the default) or aes-256-gcm (x86-64 with AES-NI only)\n"
    "  A key file:  head -c 32 /dev/urandom > key && chmod 600 key\n"
    "\n"
    "Timestamps (TS) are nanoseconds since the Unix epoch, 0 to 9223372036854775807. The\n"
    "versioned commands (--at, get-at, history) need a database created versioned; a database\n"
    "opens as it was created.\n"
    "Keys and values are bytes. Output prints a backslash as \\\\ and any byte outside printable\n"
    "ASCII as \\xNN; arguments are read back the same way (so 'a\\x00b' is a, a zero byte, b).\n"
    "Exit status: 0 success, 1 failure (not found, I/O, corruption, busy, a refused key, ...),\n"
    "2 bad usage.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "skv: %s\n(run 'skv --help' for usage)\n", message.c_str());
  return 2;
}

// A decimal number with nothing around it, at most `max`.
std::optional<uint64_t> parse_number(std::string_view text, uint64_t max) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n > max) {
    return std::nullopt;
  }
  return n;
}

// A timestamp argument: nanoseconds since the Unix epoch, 0 to 2^63 - 1 (kMaxTimestamp).
std::optional<uint64_t> parse_timestamp(std::string_view text) {
  return parse_number(text, skv::kMaxTimestamp);
}

std::string bad_timestamp(std::string_view text) {
  return "a timestamp must be a number from 0 to " + std::to_string(skv::kMaxTimestamp) +
         ", got '" + std::string(text) + "'";
}

struct Args {
  // The directory as typed (a path, never unescaped), then the unescaped keys and values.
  std::vector<std::string> positional;
  skv::cli::ScanOptions scan;
  bool raw = false;
  bool tombstones = false;
  bool versioned = false;
  std::optional<uint64_t> at;
  std::optional<std::string> key_file;
  std::optional<uint32_t> key_id;
  std::optional<skv::CipherSuite> cipher;
  std::vector<std::string> flags_seen;
};

// Parses everything after the command name. Returns 0, or the exit status of a usage error.
int parse(int argc, char** argv, Args* args) {
  bool options_done = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (options_done || arg.size() < 2 || arg.substr(0, 2) != "--") {
      if (args->positional.empty()) {
        args->positional.emplace_back(arg);
        continue;
      }
      skv::Result<std::string> text = skv::cli::unescape(arg);
      if (!text.ok()) return usage_error(text.status().message());
      args->positional.push_back(std::move(text).value());
      continue;
    }
    args->flags_seen.emplace_back(arg);
    if (arg == "--reverse") {
      args->scan.reverse = true;
    } else if (arg == "--keys-only") {
      args->scan.keys_only = true;
    } else if (arg == "--raw") {
      args->raw = true;
    } else if (arg == "--tombstones") {
      args->tombstones = true;
    } else if (arg == "--versioned") {
      args->versioned = true;
    } else if (arg == "--prefix" || arg == "--start" || arg == "--end" || arg == "--limit" ||
               arg == "--at" || arg == "--key-file" || arg == "--key-id" || arg == "--cipher") {
      if (i + 1 >= argc) return usage_error(std::string(arg) + " needs a value");
      const std::string_view value = argv[++i];
      if (arg == "--key-file") {
        if (value.empty()) return usage_error("--key-file needs a path");
        args->key_file = std::string(value);  // a path, as typed
        continue;
      }
      if (arg == "--key-id") {
        const std::optional<uint64_t> id = parse_number(value, UINT32_MAX);
        if (!id || *id == 0) {
          return usage_error("--key-id needs a number from 1 to " + std::to_string(UINT32_MAX) +
                             ", got '" + std::string(value) + "'");
        }
        args->key_id = static_cast<uint32_t>(*id);
        continue;
      }
      if (arg == "--cipher") {
        if (value == skv::cipher_name(skv::CipherSuite::XChaCha20Poly1305)) {
          args->cipher = skv::CipherSuite::XChaCha20Poly1305;
        } else if (value == skv::cipher_name(skv::CipherSuite::Aes256Gcm)) {
          args->cipher = skv::CipherSuite::Aes256Gcm;
        } else {
          return usage_error("--cipher takes xchacha20-poly1305 or aes-256-gcm, got '" +
                             std::string(value) + "'");
        }
        continue;
      }
      if (arg == "--limit") {
        const std::optional<uint64_t> limit = parse_number(value, UINT64_MAX);
        if (!limit) {
          return usage_error("--limit needs a non-negative number, got '" + std::string(value) +
                             "'");
        }
        args->scan.limit = *limit;
        continue;
      }
      if (arg == "--at") {
        args->at = parse_timestamp(value);
        if (!args->at) return usage_error("--at: " + bad_timestamp(value));
        continue;
      }
      skv::Result<std::string> text = skv::cli::unescape(value);
      if (!text.ok()) return usage_error(text.status().message());
      std::string& slot = arg == "--prefix"  ? args->scan.range.prefix
                          : arg == "--start" ? args->scan.range.start
                                             : args->scan.range.end;
      slot = std::move(text).value();
    } else {
      return usage_error("unknown option '" + std::string(arg) + "'");
    }
  }
  return 0;
}

// Usage error unless every flag given is in `allowed` (a space-separated list).
int check_flags(const Args& args, std::string_view command, std::string_view allowed) {
  for (const std::string& flag : args.flags_seen) {
    const std::string padded = " " + std::string(allowed) + " ";
    if (padded.find(" " + flag + " ") == std::string::npos) {
      return usage_error("'" + std::string(command) + "' does not take " + flag);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (std::strcmp(argv[i], "--") == 0) break;
  }

  Args args;
  if (int rc = parse(argc, argv, &args)) return rc;
  const std::vector<std::string>& pos = args.positional;

  struct Shape {
    const char* name;
    size_t positional;  // including <dir>
    const char* flags;
  };
  // Every command that opens the database takes --key-file and --key-id; the ones that may
  // create it take --cipher too.
  static constexpr Shape kShapes[] = {
      {"demo", 1, "--key-file --key-id --cipher"},
      {"set", 3, "--at --versioned --key-file --key-id --cipher"},
      {"get", 2, "--raw --key-file --key-id"},
      {"get-at", 3, "--raw --key-file --key-id"},
      {"history", 2, "--tombstones --limit --key-file --key-id"},
      {"del", 2, "--key-file --key-id"},
      {"scan", 1, "--prefix --start --end --reverse --limit --keys-only --at --key-file --key-id"},
      {"count", 1, "--prefix --start --end --key-file --key-id"},
      {"stats", 1, "--key-file --key-id"},
      {"flush", 1, "--key-file --key-id"},
      {"compact", 1, "--key-file --key-id"},
      {"checkpoint", 2, "--key-file --key-id"},
      {"restore", 2, "--key-file --key-id"},
      {"enc-info", 1, ""},
  };
  const Shape* shape = nullptr;
  for (const Shape& s : kShapes) {
    if (command == s.name) shape = &s;
  }
  if (shape == nullptr) return usage_error("unknown command '" + std::string(command) + "'");
  if (pos.size() != shape->positional) {
    return usage_error("'" + std::string(command) + "' takes " + std::to_string(shape->positional) +
                       " argument(s), got " + std::to_string(pos.size()));
  }
  if (int rc = check_flags(args, command, shape->flags)) return rc;
  if (pos[0].empty()) return usage_error("the directory must not be empty");

  if (command == "enc-info") return skv::cli::run_enc_info(pos[0]);

  skv::cli::Database db;
  db.dir = pos[0];
  if (args.key_file) {
    db.keys.key_file = *args.key_file;
  } else if (const char* env = std::getenv("SKV_KEY_FILE"); env != nullptr && *env != '\0') {
    db.keys.key_file = env;
  }
  if (db.keys.key_file.empty() && (args.key_id || args.cipher)) {
    return usage_error(std::string(args.key_id ? "--key-id" : "--cipher") +
                       " needs a key file (--key-file PATH or SKV_KEY_FILE)");
  }
  if (args.key_id) db.keys.key_id = *args.key_id;
  db.keys.cipher = args.cipher;

  if (command == "demo") return skv::cli::run_demo(db);
  if (command == "set") return skv::cli::run_set(db, pos[1], pos[2], args.at, args.versioned);
  if (command == "get") return skv::cli::run_get(db, pos[1], args.raw);
  if (command == "get-at") {
    const std::optional<uint64_t> ts = parse_timestamp(pos[2]);
    if (!ts) return usage_error("get-at: " + bad_timestamp(pos[2]));
    return skv::cli::run_get_at(db, pos[1], *ts, args.raw);
  }
  if (command == "history") {
    return skv::cli::run_history(db, pos[1], args.tombstones, args.scan.limit);
  }
  if (command == "del") return skv::cli::run_del(db, pos[1]);
  if (command == "scan") {
    args.scan.at = args.at;
    return skv::cli::run_scan(db, args.scan);
  }
  if (command == "count") return skv::cli::run_count(db, args.scan.range);
  if (command == "stats") return skv::cli::run_stats(db);
  if (command == "flush") return skv::cli::run_flush(db);
  if (command == "checkpoint" || command == "restore") {
    if (pos[1].empty()) return usage_error("the target directory must not be empty");
    return skv::cli::run_checkpoint(command, db, pos[1]);
  }
  return skv::cli::run_compact(db);
}
