// skv: the command-line tool. Parses the command line with CLI11 and runs one command
// (commands.h). docs/cli.md lists every command with an example.
//
// Exit status: 0 success, 1 not found, 2 bad usage (or a request the engine calls invalid),
// 3 a data or I/O error (commands.h, exit_code). The key of an encrypted database comes from
// --key-file, else from the environment variable SKV_KEY_FILE (a path, never a key); the key
// itself is never printed.

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "escape.h"
#include "session.h"
#include "skv/encryption.h"
#include "skv/options.h"
#include "skv/version.h"

namespace {

using skv::cli::kExitUsage;

constexpr char kFooter[] =
    "Keys and values are bytes. Text output prints valid UTF-8 as it is, a backslash as \\\\ and\n"
    "control characters and bytes outside UTF-8 as \\xNN; arguments are read back the same way\n"
    "(so 'a\\x00b' is a, a zero byte, b). With --hex both are hex digits. A value of '-' is read\n"
    "from standard input (all of it, as bytes).\n"
    "Timestamps (TS) are nanoseconds since the Unix epoch, 0 to 9223372036854775807.\n"
    "Commands that only read (get, get-at, history, scan, count, inspect, verify, dump, "
    "checkpoint,\n"
    "restore) open the database read-only: they change none of its bytes.\n"
    "A key file:  head -c 32 /dev/urandom > key && chmod 600 key\n"
    "Exit status: 0 success, 1 not found, 2 bad usage, 3 data or I/O error (damage, a refused\n"
    "key, busy, disk full, ...).";

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A decimal number with nothing around it, at most `max`.
std::optional<uint64_t> parse_number(std::string_view text, uint64_t max) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n > max) {
    return std::nullopt;
  }
  return n;
}

uint64_t timestamp_arg(std::string_view what, const std::string& text) {
  std::optional<uint64_t> ts = parse_number(text, skv::kMaxTimestamp);
  if (!ts) {
    throw UsageError(std::string(what) + ": a timestamp must be a number from 0 to " +
                     std::to_string(skv::kMaxTimestamp) + ", got '" + text + "'");
  }
  return *ts;
}

// The options every command that opens a database takes, and how output is printed.
struct Common {
  std::string key_file;
  std::string key_id;
  std::string cipher;
  bool json = false;
  bool hex = false;
};

// A key or value argument: hex digits with --hex, else escaped text (escape.h); with
// `from_stdin`, "-" means everything on standard input.
std::string bytes_arg(const Common& c, const std::string& text, bool from_stdin = false) {
  if (from_stdin && text == "-") {
    std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (std::cin.bad()) throw UsageError("cannot read the value from standard input");
    return in;
  }
  skv::Result<std::string> decoded = c.hex ? skv::cli::from_hex(text) : skv::cli::unescape(text);
  if (!decoded.ok()) throw UsageError(decoded.status().message());
  return std::move(decoded).value();
}

skv::cli::Database database(const Common& c, const std::string& dir) {
  if (dir.empty()) throw UsageError("the directory must not be empty");
  skv::cli::Database db;
  db.dir = dir;
  if (!c.key_file.empty()) {
    db.keys.key_file = c.key_file;
  } else if (const char* env = std::getenv("SKV_KEY_FILE"); env != nullptr && *env != '\0') {
    db.keys.key_file = env;
  }
  if (!c.key_id.empty()) {
    const std::optional<uint64_t> id = parse_number(c.key_id, UINT32_MAX);
    if (!id || *id == 0) {
      throw UsageError("--key-id needs a number from 1 to " + std::to_string(UINT32_MAX) +
                       ", got '" + c.key_id + "'");
    }
    db.keys.key_id = static_cast<uint32_t>(*id);
  }
  if (!c.cipher.empty()) {
    if (c.cipher == skv::cipher_name(skv::CipherSuite::XChaCha20Poly1305)) {
      db.keys.cipher = skv::CipherSuite::XChaCha20Poly1305;
    } else if (c.cipher == skv::cipher_name(skv::CipherSuite::Aes256Gcm)) {
      db.keys.cipher = skv::CipherSuite::Aes256Gcm;
    } else {
      throw UsageError("--cipher takes xchacha20-poly1305 or aes-256-gcm, got '" + c.cipher + "'");
    }
  }
  if (db.keys.key_file.empty() && (!c.key_id.empty() || !c.cipher.empty())) {
    throw UsageError(std::string(!c.key_id.empty() ? "--key-id" : "--cipher") +
                     " needs a key file (--key-file PATH or SKV_KEY_FILE)");
  }
  return db;
}

skv::cli::OutputOptions output(const Common& c) { return {c.json, c.hex}; }

// Adds the key options (and, when `prints`, --json and --hex) to `cmd`.
void key_options(CLI::App* cmd, Common* c, bool cipher) {
  cmd->add_option("--key-file", c->key_file,
                  "the database's key: 32 raw bytes or 64 hex digits, mode 0600 (default: the "
                  "path in SKV_KEY_FILE)");
  cmd->add_option("--key-id", c->key_id, "the key id the key is held under (default 1)");
  if (cipher) {
    cmd->add_option("--cipher", c->cipher,
                    "the cipher of a new database: xchacha20-poly1305 (default) or aes-256-gcm");
  }
}
void output_options(CLI::App* cmd, Common* c) {
  cmd->add_flag("--json", c->json, "print JSON (one object per entry, or per command)");
  cmd->add_flag("--hex", c->hex, "keys and values as hex, in the arguments and the output");
}

std::string version_text() {
  std::string text = "skv " + std::string(skv::kVersion) + " (format version " +
                     std::to_string(skv::kFormatVersion) + "; encryption: ";
  if (!skv::encryption_compiled()) return text + "not built in)";
  text += skv::cipher_name(skv::CipherSuite::XChaCha20Poly1305);
  if (skv::cipher_available(skv::CipherSuite::Aes256Gcm)) {
    text += ", ";
    text += skv::cipher_name(skv::CipherSuite::Aes256Gcm);
  }
  return text + ")";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "skv: an embedded, transactional key-value store. Every command names the "
      "database's directory first.",
      "skv");
  app.footer(kFooter);
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  Common c;
  int rc = 0;
  // What the chosen command runs once the command line parsed.
  std::function<int()> run;

  std::string dir, key, value, ts, target, help_topic;
  bool raw = false, versioned = false, tombstones = false;
  std::string at, limit;
  skv::cli::ScanOptions scan;
  std::string prefix, start, end;

  auto* demo =
      app.add_subcommand("demo", "write sample users, read and scan them, show a conflict");
  demo->add_option("dir", dir, "database directory")->required();
  key_options(demo, &c, true);
  demo->callback([&] { run = [&] { return skv::cli::run_demo(database(c, dir)); }; });

  auto* set = app.add_subcommand("set", "set a key (durable when the command returns)");
  set->add_option("dir", dir, "database directory")->required();
  set->add_option("key", key, "the key")->required();
  set->add_option("value", value, "the value ('-': standard input)")->required();
  set->add_option("--at", at, "stamp the version with timestamp TS (a versioned database)");
  set->add_flag(
      "--versioned", versioned,
      "create a missing database versioned (keeping every version), or insist that it is");
  key_options(set, &c, true);
  output_options(set, &c);
  set->callback([&] {
    run = [&] {
      std::optional<uint64_t> when;
      if (!at.empty()) when = timestamp_arg("--at", at);
      return skv::cli::run_set(database(c, dir), bytes_arg(c, key), bytes_arg(c, value, true), when,
                               versioned);
    };
  });

  auto* get = app.add_subcommand("get", "print a value");
  get->add_option("dir", dir, "database directory")->required();
  get->add_option("key", key, "the key")->required();
  get->add_flag("--raw", raw, "print the bytes as stored, no newline");
  key_options(get, &c, false);
  output_options(get, &c);
  get->callback([&] {
    run = [&] { return skv::cli::run_get(database(c, dir), output(c), bytes_arg(c, key), raw); };
  });

  auto* get_at = app.add_subcommand("get-at", "print the value the key had at timestamp TS");
  get_at->add_option("dir", dir, "database directory")->required();
  get_at->add_option("key", key, "the key")->required();
  get_at->add_option("ts", ts, "the timestamp")->required();
  get_at->add_flag("--raw", raw, "print the bytes as stored, no newline");
  key_options(get_at, &c, false);
  output_options(get_at, &c);
  get_at->callback([&] {
    run = [&] {
      const uint64_t when = timestamp_arg("get-at", ts);
      return skv::cli::run_get_at(database(c, dir), output(c), bytes_arg(c, key), when, raw);
    };
  });

  auto* history = app.add_subcommand("history", "print the key's versions, newest first");
  history->add_option("dir", dir, "database directory")->required();
  history->add_option("key", key, "the key")->required();
  history->add_flag("--tombstones", tombstones, "also print each delete, as 'TS deleted'");
  history->add_option("--limit", limit, "at most N versions");
  key_options(history, &c, false);
  output_options(history, &c);

  auto parse_limit = [&]() -> uint64_t {
    if (limit.empty()) return 0;
    const std::optional<uint64_t> n = parse_number(limit, UINT64_MAX);
    if (!n) throw UsageError("--limit needs a non-negative number, got '" + limit + "'");
    return *n;
  };
  history->callback([&] {
    run = [&] {
      return skv::cli::run_history(database(c, dir), output(c), bytes_arg(c, key), tombstones,
                                   parse_limit());
    };
  });

  auto* del = app.add_subcommand("del", "delete a key");
  del->add_option("dir", dir, "database directory")->required();
  del->add_option("key", key, "the key")->required();
  key_options(del, &c, false);
  output_options(del, &c);
  del->callback(
      [&] { run = [&] { return skv::cli::run_del(database(c, dir), bytes_arg(c, key)); }; });

  auto range_options = [&](CLI::App* cmd) {
    cmd->add_option("--prefix", prefix, "only keys that start with P");
    cmd->add_option("--start", start, "from key S (included)");
    cmd->add_option("--end", end, "to key E (excluded)");
  };
  auto key_range = [&]() {
    skv::cli::KeyRange r;
    r.prefix = bytes_arg(c, prefix);
    r.start = bytes_arg(c, start);
    r.end = bytes_arg(c, end);
    return r;
  };

  auto* scan_cmd = app.add_subcommand("scan", "print 'key<TAB>value' lines in key order");
  scan_cmd->add_option("dir", dir, "database directory")->required();
  range_options(scan_cmd);
  scan_cmd->add_flag("--reverse", scan.reverse, "in descending key order");
  scan_cmd->add_option("--limit", limit, "at most N entries");
  scan_cmd->add_flag("--keys-only", scan.keys_only, "print keys only");
  scan_cmd->add_option("--at", at, "the database as it was at timestamp TS");
  key_options(scan_cmd, &c, false);
  output_options(scan_cmd, &c);
  scan_cmd->callback([&] {
    run = [&] {
      scan.range = key_range();
      scan.limit = parse_limit();
      if (!at.empty()) scan.at = timestamp_arg("--at", at);
      return skv::cli::run_scan(database(c, dir), output(c), scan);
    };
  });

  auto* count = app.add_subcommand("count", "print the number of keys");
  count->add_option("dir", dir, "database directory")->required();
  range_options(count);
  key_options(count, &c, false);
  output_options(count, &c);
  count->callback(
      [&] { run = [&] { return skv::cli::run_count(database(c, dir), output(c), key_range()); }; });

  auto* inspect = app.add_subcommand(
      "inspect",
      "what the database holds, read from its files: levels, sizes, WAL, manifest, "
      "entry counts, versioning and encryption (alias: stats)");
  inspect->alias("stats");
  inspect->add_option("dir", dir, "database directory")->required();
  key_options(inspect, &c, false);
  output_options(inspect, &c);
  inspect->callback([&] {
    run = [&] {
      return skv::cli::run_inspect(inspect->get_display_name() == "stats" ? "stats" : "inspect",
                                   database(c, dir), output(c));
    };
  });

  auto* flush = app.add_subcommand("flush", "write the memtable to a table");
  flush->add_option("dir", dir, "database directory")->required();
  key_options(flush, &c, false);
  output_options(flush, &c);
  flush->callback([&] { run = [&] { return skv::cli::run_flush(database(c, dir), output(c)); }; });

  auto* compact = app.add_subcommand("compact", "compact every level down");
  compact->add_option("dir", dir, "database directory")->required();
  key_options(compact, &c, false);
  output_options(compact, &c);
  compact->callback(
      [&] { run = [&] { return skv::cli::run_compact(database(c, dir), output(c)); }; });

  auto* verify = app.add_subcommand(
      "verify", "read and check every live file; exit status 3 on damage (alias: scrub)");
  verify->alias("scrub");
  verify->add_option("dir", dir, "database directory")->required();
  key_options(verify, &c, false);
  output_options(verify, &c);
  verify->callback(
      [&] { run = [&] { return skv::cli::run_verify(database(c, dir), output(c)); }; });

  auto* checkpoint = app.add_subcommand(
      "checkpoint",
      "copy the database into TARGET, a path where nothing is yet; the copy opens "
      "as a database (hard links where possible)");
  checkpoint->add_option("dir", dir, "database directory")->required();
  checkpoint->add_option("target", target, "where the copy goes")->required();
  key_options(checkpoint, &c, false);
  output_options(checkpoint, &c);
  checkpoint->callback([&] {
    run = [&] {
      if (target.empty()) throw UsageError("the target directory must not be empty");
      return skv::cli::run_checkpoint("checkpoint", database(c, dir), output(c), target);
    };
  });

  auto* restore = app.add_subcommand(
      "restore", "make DIR, a path where nothing is yet, a database from a checkpoint");
  restore->add_option("checkpoint", dir, "the checkpoint")->required();
  restore->add_option("dir", target, "the new database directory")->required();
  key_options(restore, &c, false);
  output_options(restore, &c);
  restore->callback([&] {
    run = [&] {
      if (target.empty()) throw UsageError("the target directory must not be empty");
      return skv::cli::run_checkpoint("restore", database(c, dir), output(c), target);
    };
  });

  bool dump_hex = false;
  auto* dump = app.add_subcommand(
      "dump", "print every key and value as a dump: a header line, then 'key<TAB>value' lines");
  dump->add_option("dir", dir, "database directory")->required();
  range_options(dump);
  dump->add_flag("--hex", dump_hex, "keys and values in the dump (and --prefix, ...) as hex");
  key_options(dump, &c, false);
  dump->callback([&] {
    run = [&] {
      c.hex = dump_hex;
      return skv::cli::run_dump(database(c, dir), key_range(), dump_hex);
    };
  });

  std::string input = "-", batch = "1000";
  auto* load = app.add_subcommand(
      "load", "read a dump into the database (created when missing), in batches");
  load->add_option("dir", dir, "database directory")->required();
  load->add_option("input", input, "the dump file ('-', the default: standard input)");
  load->add_option("--batch", batch, "lines per transaction (default 1000)");
  key_options(load, &c, true);
  load->callback([&] {
    run = [&] {
      const std::optional<uint64_t> n = parse_number(batch, 1'000'000);
      if (!n || *n == 0)
        throw UsageError("--batch needs a number from 1 to 1000000, got '" + batch + "'");
      return skv::cli::run_load(database(c, dir), input, *n);
    };
  });

  std::string file;
  bool dump_keys = false, check = false, dump_all = false;
  auto* sst = app.add_subcommand("sst", "a table's properties, and with --dump-keys its entries");
  sst->add_option("dir", dir, "database directory")->required();
  sst->add_option("file", file, "the table's name in the directory (NNNNNN.sst)")->required();
  sst->add_flag("--dump-keys", dump_keys, "print every entry");
  sst->add_flag("--verify", check, "read and check every block");
  key_options(sst, &c, false);
  output_options(sst, &c);
  sst->callback([&] {
    run = [&] { return skv::cli::run_sst(database(c, dir), output(c), file, dump_keys, check); };
  });
  auto* wal = app.add_subcommand("wal", "every WAL segment's records, and with --dump its entries");
  wal->add_option("dir", dir, "database directory")->required();
  wal->add_flag("--dump", dump_all, "print every entry");
  key_options(wal, &c, false);
  output_options(wal, &c);
  wal->callback(
      [&] { run = [&] { return skv::cli::run_wal(database(c, dir), output(c), dump_all); }; });
  auto* manifest = app.add_subcommand("manifest", "the level structure the manifest records");
  manifest->add_option("dir", dir, "database directory")->required();
  manifest->add_flag("--dump", dump_all, "print every edit");
  key_options(manifest, &c, false);
  output_options(manifest, &c);
  manifest->callback(
      [&] { run = [&] { return skv::cli::run_manifest(database(c, dir), output(c), dump_all); }; });

  skv::cli::MigrateRequest migrate_request;
  std::string retention = "0";
  auto* migrate = app.add_subcommand(
      "migrate",
      "copy a RocksDB or SurrealKV 0.20/0.21 database, or an IndexedDB dump, into DIR, a new "
      "skv database (the source is only read)");
  migrate->add_option("source", migrate_request.source, "the database or dump to read")->required();
  migrate->add_option("dir", dir, "the new database directory (must not exist)")->required();
  migrate->add_option("--source", migrate_request.source_kind,
                      "what the source is: auto (the default), rocksdb, surrealkv, "
                      "indexeddb-dump");
  migrate->add_option("--column-family", migrate_request.column_families,
                      "a RocksDB column family to import (repeat for several; default: default)");
  migrate->add_flag("--all-column-families", migrate_request.all_column_families,
                    "import every column family");
  migrate->add_option("--family-mapping", migrate_request.family_mapping,
                      "with several families: prefix (the default: family name, a 0x00 byte, "
                      "then the key) or merge (keys as they are; a key in two families is "
                      "refused)");
  migrate->add_flag("--versions,!--no-versions", migrate_request.versions,
                    "import every stored version with its time where the source keeps them "
                    "(the default), or only the newest value of each key");
  migrate->add_option("--retention", retention,
                      "the new versioned database's retention in nanoseconds (0, the default: "
                      "keep every version)");
  key_options(migrate, &c, true);
  output_options(migrate, &c);
  migrate->callback([&] {
    run = [&] {
      if (migrate_request.source.empty()) throw UsageError("the source must not be empty");
      const std::optional<uint64_t> r = parse_number(retention, skv::kMaxTimestamp);
      if (!r)
        throw UsageError("--retention needs a number of nanoseconds, got '" + retention + "'");
      migrate_request.retention_ns = *r;
      return skv::cli::run_migrate(migrate_request, database(c, dir), output(c));
    };
  });

  auto* enc_info = app.add_subcommand(
      "enc-info",
      "show how each file is sealed (cipher, key id, database id), read from the "
      "file headers; needs no key, writes nothing");
  enc_info->add_option("dir", dir, "database directory")->required();
  enc_info->add_flag("--json", c.json, "print one JSON object");
  enc_info->callback([&] {
    run = [&] {
      if (dir.empty()) throw UsageError("the directory must not be empty");
      return skv::cli::run_enc_info(dir, output(c));
    };
  });

  auto* help = app.add_subcommand("help", "print the help of skv, or of one command");
  help->add_option("command", help_topic, "a command");
  help->callback([&] {
    run = [&] {
      if (help_topic.empty()) {
        std::cout << app.help();
        return 0;
      }
      for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == help_topic || sub->check_name(help_topic)) {
          std::cout << sub->help(app.get_name());
          return 0;
        }
      }
      throw UsageError("no command '" + help_topic + "' (run 'skv --help')");
    };
  });

  // A first word that names no command, said plainly (CLI11 would ask for a subcommand).
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (CLI::App* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) {
      std::fprintf(stderr, "skv: unknown command '%s'\n(run 'skv --help' for usage)\n", argv[1]);
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "skv: %s\n(run 'skv --help' for usage)\n", e.what());
    return kExitUsage;
  }
  try {
    rc = run();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "skv: %s\n(run 'skv --help' for usage)\n", e.what());
    return kExitUsage;
  }
  std::fflush(stdout);
  return rc;
}
