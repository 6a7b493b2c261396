// The commands of the skv tool, written against the public API only (skv/skv.h) and the
// platform the program links (default_platform(): POSIX files and a thread pool natively); the
// one exception is enc-info (enc_info.cpp), which decodes file headers with the format and crypto
// modules' own code so that it never opens the tree.
//
// Commands that only read (get, get-at, history, scan, count, inspect, verify, dump, checkpoint,
// restore)
// open the tree read-only (Options::read_only): they change no byte of the database, several may
// run at once, and none while a writer has it open. Every command but enc-info opens the tree at
// `db.dir` (with the key of `db.keys` when the database is encrypted), does its work, closes the
// tree and returns the process exit status (exit_code). A failure is printed to stderr as
// "skv: <command>: <code>: <message>" ("<code>/<sub-kind>" for an encryption error). Keys and
// values arrive already decoded (escape.h) and are printed as OutputOptions says. Writes are
// committed with Durability::Immediate.
//
// Thread safety: each command runs on the calling thread.

#ifndef SKV_TOOLS_SKV_COMMANDS_H_
#define SKV_TOOLS_SKV_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skv/encryption.h"
#include "skv/status.h"

namespace skv::cli {

// Exit statuses (docs/cli.md, "Exit status").
constexpr int kExitOk = 0;
constexpr int kExitNotFound = 1;  // the key, the version or the database does not exist
constexpr int kExitUsage = 2;     // a bad command line, or a request the engine calls invalid
constexpr int kExitFailed = 3;    // data or I/O error: damage, a refused key, busy, disk full, ...

// The exit status for a command that ended with `s`.
int exit_code(const Status& s);

// Where a command finds the key of an encrypted database (docs/encryption.md, "The skv tool").
struct KeyOptions {
  // A key file (32 raw bytes or 64 hex digits, mode 0600), read with
  // SoftwareKeyManager::from_key_file. Empty: no key; the database must not be encrypted.
  std::string key_file;
  uint32_t key_id = 1;  // the id the key is held under
  // The cipher a database created by the command is sealed with (nullopt: XChaCha20-Poly1305).
  // An existing database must have been created with it.
  std::optional<CipherSuite> cipher;
};

// A database as the command line names it: its directory (a path, as typed) and its key.
struct Database {
  std::string dir;
  KeyOptions keys;
};

// How keys, values and results are printed.
struct OutputOptions {
  bool json = false;  // one JSON object per entry (scan, history) or per command
  bool hex = false;   // keys and values as hex (escape.h)
};

// Which keys a scan or count visits: [start, end) intersected with the keys that begin with
// `prefix` (an empty string means "no bound" for each of the three).
struct KeyRange {
  std::string start;
  std::string end;
  std::string prefix;
};

struct ScanOptions {
  KeyRange range;
  bool reverse = false;
  uint64_t limit = 0;  // 0 = no limit
  bool keys_only = false;
  std::optional<uint64_t> at;  // the database as of this timestamp (a versioned database)
};

// Writes sample users in a few transactions, reads them back, scans both ways, shows a
// conflict and a rollback, printing each step.
int run_demo(const Database& db);

// Sets `key` to `value`, stamped with timestamp `at` when given (set_at: the database must be
// versioned, NotSupported otherwise). With `versioned`, a database that does not exist is
// created versioned, keeping every version; one that exists must be versioned (InvalidArgument
// otherwise). Without it a database opens as it was created, and a new one is not versioned.
int run_set(const Database& db, const std::string& key, const std::string& value,
            std::optional<uint64_t> at, bool versioned);

// Prints the value of `key` (or, with `raw`, the bytes as stored and no newline). A missing key
// is NotFound (exit status 1). JSON: {"key":..,"value":..}.
int run_get(const Database& db, const OutputOptions& out, const std::string& key, bool raw);

// As run_get(), for the value `key` had at timestamp `ts` (get_at). NotFound when it had none
// then; NotSupported on a database that is not versioned. JSON adds "timestamp".
int run_get_at(const Database& db, const OutputOptions& out, const std::string& key, uint64_t ts,
               bool raw);

// Prints the versions of `key`, newest first (then the later commit first), at most `limit` (0:
// all): one line per version, its timestamp in decimal, a tab and the value; with `tombstones` a
// delete is the line "<timestamp> deleted" (no tab, so it never reads as a value). JSON: one
// object per line, {"timestamp":..,"value":..} or {"timestamp":..,"deleted":true}. A key without
// versions prints nothing and succeeds. NotSupported on a database that is not versioned.
int run_history(const Database& db, const OutputOptions& out, const std::string& key,
                bool tombstones, uint64_t limit);

// Deletes `key` (deleting a missing key succeeds).
int run_del(const Database& db, const std::string& key);

// Prints one line per entry: the key, and unless keys_only a tab and the value. JSON: one object
// per line, {"key":..,"value":..}. With `at`, the database as it was then (range_at / keys_at; a
// versioned database).
int run_scan(const Database& db, const OutputOptions& out, const ScanOptions& options);

// Prints the number of live keys in the range. JSON: {"count":N}.
int run_count(const Database& db, const OutputOptions& out, const KeyRange& range);

// Prints what the database holds, read from its files (inspect.cpp): format version,
// versioning and encryption as stored, tables per level, value logs, WAL segments, the manifest,
// and entry counts. `command` is "inspect" or its alias "stats". JSON: one object.
int run_inspect(std::string_view command, const Database& db, const OutputOptions& out);

// Writes the memtable to a table and waits until it is durable.
int run_flush(const Database& db, const OutputOptions& out);

// Compacts every level down and waits for it.
int run_compact(const Database& db, const OutputOptions& out);

// Writes a checkpoint of the database into `target`, where nothing may exist yet
// (Tree::checkpoint): the source opens read-only, so no byte of it changes and its unflushed WAL
// is copied. `command` is "checkpoint" or "restore" (a restore is a checkpoint of a checkpoint
// into the database's place); it names the command in messages. The copy is encrypted under the
// same key when the source is.
int run_checkpoint(std::string_view command, const Database& db, const OutputOptions& out,
                   const std::string& target);

// Reads and checks every live file (Tree::verify) and prints a line per file ("ok" or "DAMAGED"
// with the error) and a summary; with a terminal on stderr, a progress bar there. Exit status 3
// when any file is damaged. JSON: one object with "files", "bytes" and "damaged".
int run_verify(const Database& db, const OutputOptions& out);

// Dump and load (docs/cli.md, "Dump and load"). A dump is text: a first line "skv-dump 1 text"
// or "skv-dump 1 hex", then one line per key in key order, the key, a tab and the value, each
// escaped (escape.h) or in hex as the first line says. Newest values only: versions are not
// dumped.
//
// Writes the dump of every key (or of `range`) to standard output.
int run_dump(const Database& db, const KeyRange& range, bool hex);
// Reads a dump from `input` ("-": standard input) into the database (created when missing),
// committing `batch_rows` lines per transaction (blind writes, Durability::Immediate), with a
// progress bar on a terminal and a summary on standard error. A bad line stops the load with
// InvalidArgument naming its line number, after the batches before it were committed: a load is
// not atomic, but it only sets keys, so it can be run again.
int run_load(const Database& db, const std::string& input, uint64_t batch_rows);

// One file, or one kind of file, decoded with the engine's readers (files.cpp), from the
// directory opened read-only (with the key when the database is encrypted):
//   sst: table `file` (a name in the directory): its properties; with `dump_keys` every entry
//        (key @sequence kind ts=timestamp, then the value or the value log pointer); with
//        `verify` every block read and checked.
//   wal: every WAL segment: bytes, records, entries; with `dump` every entry.
//   manifest: the manifest CURRENT names, replayed: the live tables per level with their key
//        ranges, and the value logs; with `dump` every edit.
int run_sst(const Database& db, const OutputOptions& out, const std::string& file, bool dump_keys,
            bool verify);
int run_wal(const Database& db, const OutputOptions& out, bool dump);
int run_manifest(const Database& db, const OutputOptions& out, bool dump);

// Lists how each file of the database at `dir` is sealed, without a key and without opening the
// tree: a first line for CURRENT ("sealed" with its key id, cipher and database id, or "plain"),
// then one line per file whose name file_names.h recognises, in name order, with its kind,
// number, size and the envelope of its 64-byte header (cipher name, key id, database id in hex),
// or the error its header gives; with `out.json`, one object with the same facts. Writes nothing.
// NotFound (exit 1) when `dir` has no CURRENT.
int run_enc_info(const std::string& dir, const OutputOptions& out);

// Migrates `source` (a RocksDB or SurrealKV 0.20/0.21 directory, or an IndexedDB dump) into a
// new database at `destination.dir` (sealed with its key when one is given) with skv::migrate
// (skv/migrate.h, docs/migration.md), with a progress bar on a terminal and a summary: one line
// per fact, or one JSON object. The source is only read; on failure nothing is left at the
// destination.
struct MigrateRequest {
  std::string source;
  std::string source_kind = "auto";  // auto, rocksdb, surrealkv, indexeddb-dump
  std::vector<std::string> column_families;
  bool all_column_families = false;
  std::string family_mapping = "prefix";  // prefix, merge
  bool versions = true;
  uint64_t retention_ns = 0;
};
int run_migrate(const MigrateRequest& request, const Database& destination,
                const OutputOptions& out);

}  // namespace skv::cli

#endif  // SKV_TOOLS_SKV_COMMANDS_H_
