// VersionSet: the current Version, the counters that survive restarts, and the manifest that makes
// them durable.
//
// The manifest (MANIFEST-<number>, a log file of framed VersionEdit records; docs/manifest.md)
// starts with a snapshot edit describing every live table and counter, followed by one edit per
// change. The storage pointer "CURRENT" names the manifest in use. log_and_apply() appends an edit,
// syncs it, and only then installs the new Version. When the manifest grows past
// kMaxManifestSize, after recovery, and after any failed manifest write, the next log_and_apply()
// starts a new manifest instead: snapshot, sync, sync_dir, CURRENT, then the old one is removed.
//
// Thread safety: NOT thread-safe. The caller (the tree) holds its own mutex around every call,
// with two exceptions: new_file_number() may be called from any thread at any time (background
// jobs allocate output numbers with it), and the Versions handed out are immutable and may be
// used without the mutex.

#ifndef SKV_VERSION_VERSION_SET_H_
#define SKV_VERSION_VERSION_SET_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "skv/options.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "version/table_cache.h"
#include "version/version.h"
#include "version/version_edit.h"

namespace skv {

namespace crypto {
class Keyring;
}  // namespace crypto

namespace log {
class Writer;
}

// The manifest moves to a new file once it is larger than this.
constexpr uint64_t kMaxManifestSize = 64ull * 1024 * 1024;

// Writes MANIFEST-<number> into `storage` holding `snapshot`, sealed under `keyring` (null for a
// plaintext database), syncs it and the directory, then points CURRENT at it (with its seal) and
// returns the manifest's writer, open for more edits. If anything before CURRENT fails, the new
// manifest is removed; if CURRENT's write fails, CURRENT may name either manifest. Used by
// VersionSet for every new manifest and by checkpoints for theirs.
Result<std::unique_ptr<log::Writer>> write_manifest(Storage* storage, crypto::Keyring* keyring,
                                                    uint64_t number, const VersionEdit& snapshot);

class VersionSet {
 public:
  // `storage` must outlive the set; its Versions share `table_cache`. options.level_count must be
  // in [2, kMaxLevelCount].
  VersionSet(Storage* storage, const Options& options, std::shared_ptr<TableCache> table_cache);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  ~VersionSet();

  // Creates the manifest of a new, empty database: MANIFEST-000001 holding a snapshot edit,
  // synced, then Storage::sync_dir(), then CURRENT written to name it. Afterwards the set is
  // ready (empty version, next file number 2, last sequence 0, log number 0).
  // REQUIRES: no database exists in `storage`; neither create_new nor recover was called.
  Status create_new();

  // The keyring of an encrypted database (null, the default, for a plaintext one): the manifests
  // are sealed with it and CURRENT carries its seal (docs/encryption.md). It must outlive the set.
  // REQUIRES: called before create_new or recover.
  void set_keyring(crypto::Keyring* keyring) { keyring_ = keyring; }
  // Makes the next log_and_apply() start a new manifest (and rewrite CURRENT), as when the
  // manifest grows too large: after a key rotation, so the manifest is sealed under the new key.
  void roll_manifest() { force_roll_ = true; }

  // Loads the state of an existing database: reads CURRENT, replays every edit of the manifest
  // it names and builds the current Version. A torn tail at the very end of the manifest (an
  // unsynced last write) is dropped; any other damage is Corruption naming the file and offset.
  // Every table the recovered Version names must exist in the object store, and every value log
  // in the log store; a missing one is Corruption naming it. NotFound if there is no CURRENT.
  // Nothing is written: the next log_and_apply() starts a fresh manifest. REQUIRES: neither
  // create_new nor recover was called.
  Status recover();

  // Makes `edit` durable and installs the Version it produces. Fills the edit's next file number
  // and last sequence from this set (the log number only if the edit has none). Checks the edit
  // against the current Version first: deleted files must be present at their level, added
  // numbers must be new, levels must be in range, L1+ must stay non-overlapping, a log number
  // must not go backwards, and the tables' value log references must agree with the live value
  // logs (Version::vlog_inconsistency) (InvalidArgument; nothing written). A value log no table
  // of the new Version points into is deleted by the same edit (added to it here). Then appends the
  // edit to the manifest and syncs it (or starts a new manifest, see above), and only on success
  // installs the new Version. On failure the current Version is unchanged and the next call starts
  // a new manifest; the edit may nevertheless be durable, so the caller must treat the failure as
  // sticky and must not delete the files the edit adds until the database is reopened.
  // REQUIRES: create_new() or recover() succeeded.
  Status log_and_apply(VersionEdit* edit);

  // The current Version. Holding it keeps its files alive (see live_files()).
  std::shared_ptr<const Version> current() const { return current_; }

  // Allocates a fresh file number (for a table, WAL segment or manifest). Thread-safe. Numbers
  // stay below kMaxFileNumber (format/file_names.h): past it, Corruption saying so, and nothing
  // is allocated. Only a file of the database numbered near the bound (a stray file named like
  // one, or a damaged manifest) can bring that about; 2^56 allocations take centuries.
  Result<uint64_t> new_file_number();
  // The number the next new_file_number() returns (without allocating). Thread-safe.
  uint64_t next_file_number() const { return next_file_number_.load(); }
  // Ensures future numbers are above `number` (e.g. for a WAL segment found on disk).
  void mark_file_number_used(uint64_t number);

  // The newest sequence number made durable in the manifest or WAL; the tree keeps it current.
  SequenceNumber last_sequence() const { return last_sequence_; }
  // REQUIRES: s >= last_sequence().
  void set_last_sequence(SequenceNumber s);
  // The largest commit timestamp handed out, as far as the manifest knows (the WAL may hold
  // newer ones); recorded with every edit like the last sequence. Never decreases: a smaller
  // value is ignored.
  uint64_t last_timestamp() const { return last_timestamp_; }
  void set_last_timestamp(uint64_t ts) { last_timestamp_ = std::max(last_timestamp_, ts); }

  // Whether the database is versioned and its retention: what create_new() recorded (from
  // Options::versioning) or recover() read. Changed by an edit carrying versioning.
  const Versioning& versioning() const { return versioning_; }

  // The oldest WAL segment still needed (0 when none was ever recorded).
  uint64_t log_number() const { return log_number_; }
  // The manifest currently appended to, or that CURRENT names after recovery.
  uint64_t manifest_file_number() const { return manifest_number_; }

  int level_count() const { return level_count_; }
  int num_level_files(int level) const { return current_->num_files(level); }
  uint64_t level_bytes(int level) const { return current_->level_bytes(level); }

  // Where the next compaction of `level` starts (an internal key; empty: the beginning).
  const std::string& compact_pointer(int level) const { return compact_pointers_[level]; }

  // Numbers of every table referenced by a Version that is still alive: the current one and any
  // older one still held by a reader, iterator or compaction. A table not in this set, not being
  // written by a running job, is obsolete and may be deleted.
  std::set<uint64_t> live_files();
  // The same for value log files: every one live in a Version still alive. A value log not in
  // this set (and not being written by a running job) is obsolete and may be deleted.
  std::set<uint64_t> live_vlog_files();

  const Options& options() const { return options_; }
  TableCache* table_cache() const { return table_cache_.get(); }

  // An edit describing the whole current state: every counter, compact pointer and live file
  // (what a new manifest starts with).
  VersionEdit snapshot_edit() const;

  // Overrides kMaxManifestSize (tests use a small limit to exercise rollover).
  void set_max_manifest_size(uint64_t bytes) { max_manifest_size_ = bytes; }

 private:
  class Builder;

  // Starts manifest `number` holding a snapshot of the current state (current_ and the counters),
  // syncs it and the directory, points CURRENT at it and removes the previous manifest.
  Status write_new_manifest(uint64_t number);
  // Adds every counter, compact pointer and live file of the current state to `edit`.
  void append_snapshot(VersionEdit* edit) const;
  void install(std::shared_ptr<const Version> v);
  Status check_tables_exist(const Version& v, const std::string& manifest);

  Storage* const storage_;
  crypto::Keyring* keyring_ = nullptr;
  bool force_roll_ = false;  // roll_manifest() was called
  const Options options_;
  const std::shared_ptr<TableCache> table_cache_;
  const int level_count_;

  std::atomic<uint64_t> next_file_number_{2};
  SequenceNumber last_sequence_ = 0;
  uint64_t last_timestamp_ = 0;
  Versioning versioning_;
  uint64_t log_number_ = 0;
  uint64_t manifest_number_ = 0;
  uint64_t max_manifest_size_ = kMaxManifestSize;
  std::vector<std::string> compact_pointers_;

  std::unique_ptr<log::Writer> manifest_;  // null: the next log_and_apply starts a new manifest
  std::shared_ptr<const Version> current_;
  std::vector<std::weak_ptr<const Version>> handed_out_;  // every version installed
};

}  // namespace skv

#endif  // SKV_VERSION_VERSION_SET_H_
