// The flush/compaction job: writes a sorted stream of internal keys into new SSTables, dropping
// the versions nobody can see any more.
//
// Garbage collection. Given the live snapshots s1 < s2 < ... < sk (plus "latest"), the stripe of
// a sequence number q is the smallest si >= q, or "latest" when q > sk. A reader at snapshot si
// sees, for each user key, the newest version in stripe si or an older stripe; so for each user
// key only the newest version of each stripe is kept, the others are dropped. A tombstone that is
// the newest version of the oldest stripe (q <= s1, or any q when there are no snapshots) is
// dropped too, together with every older version of its key, when no deeper level holds a file
// whose range covers the key (nothing below could show through once it is gone).
//
// Versioned trees (JobContext::retention_cutoff set, docs/versioning.md) keep versions by time
// instead. Within each stripe every version with a timestamp above the cutoff stays, and of the
// versions at or before it, each one whose timestamp is above those of every such version met
// before it in the stripe (newest sequence first): so the newest one at or before the cutoff (by
// timestamp, then sequence) always stays, and a version written out of time order may keep one
// older than it. A reader at any snapshot therefore gets the same answer as of any time from
// the cutoff on. Tombstones follow the same rule and are never dropped otherwise: a version of
// the key with an earlier timestamp may sit in a newer table or arrive later (set_at), and only
// the tombstone keeps it hidden as of the times after the tombstone.
//
// Values (docs/vlog.md). A flush with Options::enable_vlog writes every inline value of at least
// vlog_value_threshold bytes to a new value log (VlogOutput) and the table gets a ValuePointer
// entry instead. A compaction copies pointers as they are, except pointers into the value logs
// it relocates (Compaction::relocate_vlogs, garbage collection): their entries are read and
// appended to the job's own new value log, and the table gets the new pointer. Each output table
// records the value log bytes it points at (FileMetaData::vlog_refs), and the job's value logs
// go into its edit beside the tables. Which entries survive is decided as before; only the
// surviving ones are written or moved.
//
// Durability. A value log file's name is synced when it is created, and its entries are synced
// before a table that points at them is finished. Every output is finished (durable) and then
// Storage::sync_dir() runs, before the function returns: the caller logs the edit naming the
// outputs only afterwards, so the manifest never names a file whose directory entry could vanish.
// On any error the partial and finished outputs are removed and the error is returned; nothing is
// left for the caller to clean up.
//
// Thread safety: a job reads only immutable inputs (a Version, a frozen memtable) and writes new
// files, so it runs WITHOUT the tree's mutex. Picking and log_and_apply happen under it. Output
// numbers come from the context's new_file_number, which must be thread-safe
// (VersionSet::new_file_number() is). Until the edit is logged, the tree must keep its obsolete-
// file sweep away from the numbers a running job allocates (e.g. ignore every number >= the
// next_file_number() seen when the job started).

#ifndef SKV_COMPACTION_COMPACTION_JOB_H_
#define SKV_COMPACTION_COMPACTION_JOB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "compaction/compaction_picker.h"
#include "crypto/cipher_source.h"
#include "iterator/internal_iterator.h"
#include "skv/options.h"
#include "skv/platform.h"
#include "skv/status.h"
#include "sstable/table_options.h"
#include "version/table_cache.h"
#include "version/version.h"
#include "version/version_edit.h"
#include "version/vlog_cache.h"

namespace skv {

struct JobContext {
  Storage* storage = nullptr;
  const Options* options = nullptr;   // table format, target_file_size and the vlog_* options
  TableCache* table_cache = nullptr;  // opens compaction inputs (unused by flushes)
  VlogCache* vlog_cache = nullptr;    // reads the values a compaction relocates
  // Seals the tables and value logs written (null for a plaintext database).
  crypto::CipherSource* ciphers = nullptr;
  std::function<Result<uint64_t>()> new_file_number;
  std::vector<SequenceNumber> snapshots;  // live snapshots, ascending (duplicates allowed)
  // Set for a versioned tree: versions with a timestamp above it are all kept (0: every one).
  std::optional<uint64_t> retention_cutoff;
};

// What a job does with values besides copying them (see "Values" above).
struct VlogPolicy {
  // Inline values of at least this many bytes go to a value log (0: none do).
  size_t separate_threshold = 0;
  // Pointers into these value logs (ascending) get their entries copied to a new value log.
  std::vector<uint64_t> relocate;
};

struct SortedRunOutput {
  std::vector<FileMetaData> files;       // in key order, each non-empty, never sharing a user key
  std::vector<VlogFileMeta> vlog_files;  // value logs written, each pointed into by `files`
  uint64_t vlog_bytes_moved = 0;         // entry bytes copied out of relocated value logs
  uint64_t entries_read = 0;
  uint64_t entries_dropped = 0;
  uint64_t bytes_written = 0;
};

// The table format settings of `options`.
TableOptions table_options_from(const Options& options);

// Writes every entry of `input` (from seek_first to the end) that survives garbage collection
// into new tables, starting a new table at the first user-key boundary after a table reaches
// `target_file_size` bytes. "Deeper levels" for tombstone dropping are levels first_deeper_level
// and below of `version` (a null `version` has none). Values are separated or relocated as
// `policy` says. Returns the input's error if it fails, Corruption for a malformed internal key
// or value pointer, and the value log's errors for a value it relocates. Empty output
// (everything dropped) is OK with no files.
Status write_sorted_run(InternalIterator* input, const JobContext& ctx, const Version* version,
                        int first_deeper_level, uint64_t target_file_size, SortedRunOutput* out,
                        const VlogPolicy& policy = {});

// Runs compaction `c`: merges its inputs, writes the outputs into c.output_level and fills `edit`
// with the change (inputs deleted, outputs added, the level's compact pointer advanced) for the
// caller to pass to VersionSet::log_and_apply. A trivial move rewrites nothing. `out` (optional)
// receives the outputs and counters.
Status run_compaction(const Compaction& c, const JobContext& ctx, VersionEdit* edit,
                      SortedRunOutput* out = nullptr);

// Compaction `c` run in steps, so a host whose executor shares a thread with the application
// can interleave other work (Options::compaction_step_bytes). The job keeps its inputs' Version
// and its partial outputs between steps; destroying an unfinished job removes those outputs.
// Same outcome as run_compaction once step() reports done: edit() then holds the change.
//
// Thread safety: one thread at a time; it runs without the tree's mutex, as run_compaction.
class CompactionJob {
 public:
  CompactionJob(std::unique_ptr<Compaction> c, const JobContext& ctx);
  CompactionJob(const CompactionJob&) = delete;
  CompactionJob& operator=(const CompactionJob&) = delete;
  ~CompactionJob();

  // Reads about `budget_bytes` of input (keys plus values; 0: all of it). *done once the whole
  // compaction is written and durable. An error leaves the job to be destroyed.
  Status step(uint64_t budget_bytes, bool* done);

  const Compaction& compaction() const;
  // REQUIRES: step() reported done.
  VersionEdit* edit();
  const SortedRunOutput& output() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// Flushes a frozen memtable (its iterator) into one L0 table. `version` is the current Version
// when the flush starts (every level of it counts as deeper, for tombstone dropping); the tree
// flushes one memtable at a time, oldest first. With Options::enable_vlog, large values go to
// value logs, which `vlog_files` (optional) receives. On OK, *out describes the table, or has
// number == 0 and num_entries == 0 if nothing survived (then no file exists).
Status write_level0_table(InternalIterator* memtable_iter, const JobContext& ctx,
                          const Version* version, FileMetaData* out,
                          std::vector<VlogFileMeta>* vlog_files = nullptr);

}  // namespace skv

#endif  // SKV_COMPACTION_COMPACTION_JOB_H_
