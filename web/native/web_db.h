// WebDb: one open database as the JS wrapper (web/src/database.js) sees it, bound with Embind.
//
// Everything crosses the boundary as numbers, strings, Uint8Arrays and plain objects: no C++
// object but the WebDb itself is handed to JavaScript, so nothing leaks when a script forgets a
// transaction. Transactions and iterators are named by small integer ids.
//
// Errors never throw. A call that fails returns its failure value (0 for an id, a non-zero code
// number for a status, null for a value) and leaves the error in error_code() / error_message();
// the wrapper turns them into an SkvError. error_code() is the C++ code name ("conflict",
// "quota", ...), the stable `code` of SkvError. Nor does any JavaScript exception unwind through
// these calls: every call into JavaScript that can throw is caught there (js_calls.h).
//
// Commits (and flush()) return an id at once; their outcome arrives later through take_done(),
// after the wrapper has run the executor (run_pending) at the end of the event loop's turn. With
// the Deferred pipeline every commit queued in one turn shares one WAL write and, if any of them
// is Immediate, one flush() of the slot.
//
// Thread safety: none; the worker thread that owns the OPFS handles makes every call.

#ifndef SKV_WEB_NATIVE_WEB_DB_H_
#define SKV_WEB_NATIVE_WEB_DB_H_

#include <emscripten/val.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/opfs/opfs_platform.h"
#include "skv/status.h"
#include "skv/tree.h"

namespace skv::web {

// The sub-kind of an Encryption status as the `reason` of an SkvError: "wrong_key",
// "unknown_key_id", "key_retired", "not_configured" or "not_encrypted"; "" for any other status.
const char* encryption_reason(const Status& s);

class WebDb {
 public:
  WebDb() = default;
  WebDb(const WebDb&) = delete;
  WebDb& operator=(const WebDb&) = delete;
  ~WebDb();

  // Opens database `name` over the handle table the wrapper registered as `table`. `options` is
  // the wrapper's plain object (see web/types/common.d.ts, OpenOptions). A number that is not an
  // integer the field can hold, a value of the wrong type, or a property that throws when read is
  // InvalidArgument naming the option and the value (for `key`, its type and length only). With
  // `key` the tree opens with a SoftwareKeyManager holding it (TreeBuilder::with_encryption): a
  // new database is created sealed with XChaCha20-Poly1305; an existing one refuses a wrong key,
  // a missing key or a key for a plaintext database with an Encryption status (error_reason())
  // before any file is changed. Returns 0 or an error.
  int open(const std::string& name, int table, emscripten::val options);
  // As open(), read-only (Options::read_only): an existing database only (NotFound otherwise),
  // and nothing is written to it. The wrapper opens an imported database this way once, to check
  // it (importFiles()).
  int open_read_only(const std::string& name, int table, emscripten::val options);
  // Closes the tree (commits still queued are written first). Returns 0 or an error.
  int close();

  // Transactions. begin() returns an id (> 0), or 0 on error.
  int begin(bool read_only);
  int set(int txn, const std::string& key, const std::string& value);
  int del(int txn, const std::string& key);
  // A Uint8Array copy of the value, undefined when the key has none, null on error.
  emscripten::val get(int txn, const std::string& key);
  // Starts Transaction::get_async(key): returns an id (> 0) that take_done() reports when the
  // read has run on the executor, after which take_value(id) gives its value; 0 on error.
  int get_async(int txn, const std::string& key);
  // The value of a finished get_async() (once): a Uint8Array copy, or undefined when the key
  // has none. Null when `id` names no finished read (never started, failed, or taken already).
  emscripten::val take_value(int id);
  // The number of live keys in [start, end), or -1 on error.
  double count(int txn, const std::string& start, const std::string& end);
  int savepoint(int txn);
  int rollback_to_savepoint(int txn);
  int rollback(int txn);
  // Queues the commit; returns its id (> 0; the outcome comes from take_done()) or 0 on error.
  // `durability`: 0 Eventual, 1 Immediate, -1 the database's default.
  int commit(int txn, int durability);

  // Versioned queries (skv/transaction.h); on a database that is not versioned they fail with
  // NotSupported. A timestamp arrives as JavaScript gave it, a BigInt or a safe-integer Number,
  // and is checked here (read_js_u63): anything but an integer from 0 (1 for set_at) to 2^63 - 1
  // is InvalidArgument naming the value.
  int set_at(int txn, const std::string& key, const std::string& value, emscripten::val ts);
  // As get(), as of `ts`.
  emscripten::val get_at(int txn, const std::string& key, emscripten::val ts);
  // The versions of `key`, newest first, packed (little-endian): u32 count, then per version u64
  // timestamp, u32 value length (0xFFFFFFFF for a tombstone), the value. `limit`: at most that
  // many (a non-negative integer or Infinity; 0 gives none). Null on error.
  emscripten::val history(int txn, const std::string& key, bool include_tombstones, double limit);
  // The stored versioning as { enabled, retentionNs } (retentionNs a BigInt).
  emscripten::val versioning();

  // Iterators over [start, end) of a transaction's view. iter_open returns an id (> 0) or 0.
  int iter_open(int txn, const std::string& start, const std::string& end, bool reverse,
                bool keys_only);
  // As iter_open(), over the tree as of `ts` (range_at, or keys_at for keys only).
  int iter_open_at(int txn, const std::string& start, const std::string& end, emscripten::val ts,
                   bool reverse, bool keys_only);
  // The next entries, packed (little-endian): u32 count, u32 done (1 when the range is
  // exhausted), then per entry u32 key length, u32 value length (0xFFFFFFFF for keys only), the
  // key, the value. At most `max_entries` entries and about `max_bytes` bytes; both must be at
  // least 1 (InvalidArgument otherwise, so a caller cannot loop on empty batches). Null on error.
  emscripten::val iter_next(int it, int max_entries, int max_bytes);
  // Skips up to `n` entries (a non-negative integer); returns how many were skipped, or -1 on
  // error.
  double iter_skip(int it, double n);
  void iter_close(int it);

  // Starts a flush of the memtable; returns an id reported by take_done(), or 0 on error.
  int flush();
  // Compacts every level down (runs to completion). Returns 0 or an error.
  int compact_all();
  // Collects value log garbage (Tree::collect_vlog_garbage; runs to completion). Returns 0 or an
  // error.
  int collect_vlog_garbage();
  // Completed commits and flushes: an array of [id, code name ("ok" on success), message,
  // reason (error_reason() of that status)].
  emscripten::val take_done();

  // The executor: runs up to `max_tasks` queued tasks (WAL writes, flushes, compactions).
  int run_pending(int max_tasks);
  int pending() const;
  // True when flushes and compactions lag behind writes: frozen memtables are waiting, or L0
  // holds more than twice the files that trigger its compaction.
  bool background_behind();

  // The slot pool's reserve (see platform/opfs/slot_pool.h).
  bool needs_more_slots();
  int slots_wanted();
  int add_slots(int n);

  // Writes a checkpoint of the open database (Tree::checkpoint) into the new database `target`,
  // over handle table `table`, which the wrapper prepared for it: the slot files of a directory
  // it has just made, all blank. The platform's factory hands those handles out for `target`
  // during this call only. InvalidArgument ("already exists") for the database's own name or a
  // table that already holds a database; Busy if a checkpoint into `target` is under way; Quota
  // ("slot pool exhausted") when the table has too few slots for every copied file, the new
  // manifest and CURRENT. A failure part-way leaves `target` without CURRENT (the core removes
  // what it wrote); the wrapper then removes its directory. Returns 0 or an error.
  int checkpoint(const std::string& target, int table);
  // Reads and checks every live file (Tree::verify). Returns 0 when all check; otherwise the code
  // of the first damaged file, with a message naming each damaged file and its damage.
  int verify();

  // Tree and pool counters as a plain object, with the transactions and iterators open now
  // (openTransactions, openIterators): each holds a snapshot.
  emscripten::val stats();
  // Every logical file of the database as [name, Uint8Array] pairs: the files the native build
  // keeps in its directory (CURRENT included), byte for byte. Null on error.
  emscripten::val export_files();

  std::string error_code() const { return code_name(error_.code()); }
  std::string error_message() const { return error_.message(); }
  // For an "encryption" error, its sub-kind (encryption_reason); "" otherwise.
  std::string error_reason() const { return encryption_reason(error_); }

 private:
  struct Cursor {
    Iterator it;
    bool reverse = false;
    bool keys_only = false;
    bool started = false;
  };

  // Records `s` as the last error; returns its code as a number (0 for OK).
  int fail(const Status& s);
  // A Uint8Array copy of `bytes`, or null with the error recorded if JavaScript could not
  // allocate one (js_calls.h).
  emscripten::val bytes_to_js(std::string_view bytes);
  Transaction* txn(int id);
  Cursor* cursor(int id);
  // Positions a cursor on its first entry the first time it is used.
  Status start(Cursor* c);
  Status step(Cursor* c);
  int add_cursor(Result<Iterator> it, bool reverse, bool keys_only);
  int open_tree(const std::string& name, int table, const emscripten::val& options, bool read_only);

  std::string name_;
  std::shared_ptr<OpfsPlatform> platform_;
  // Handle tables of other databases, by name, that the platform's factory hands out: the target
  // of a checkpoint, for the length of that call.
  std::shared_ptr<std::map<std::string, std::shared_ptr<SlotHandles>>> targets_ =
      std::make_shared<std::map<std::string, std::shared_ptr<SlotHandles>>>();
  std::optional<Tree> tree_;
  Status error_;
  int next_id_ = 1;
  std::map<int, Transaction> txns_;
  std::map<int, Cursor> cursors_;
  std::vector<std::pair<int, Future<Status>>> in_flight_;
  // get_async() reads on their way, and the values of finished ones until take_value().
  std::vector<std::pair<int, Future<Result<std::optional<std::string>>>>> reads_in_flight_;
  std::map<int, std::optional<std::string>> read_values_;
};

}  // namespace skv::web

#endif  // SKV_WEB_NATIVE_WEB_DB_H_
