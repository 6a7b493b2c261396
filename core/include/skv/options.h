// Options: how a tree is configured. Set them through TreeBuilder (tree.h); this header holds the
// plain struct and the enums.
//
// Thread safety: a plain value type, copyable.

#ifndef SKV_OPTIONS_H_
#define SKV_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "skv/encryption.h"

namespace skv {

class Platform;

// When a commit is acknowledged relative to its WAL write reaching stable storage.
enum class Durability : uint8_t {
  // The commit is written to the WAL but not synced before it completes. A crash may lose the
  // most recent such commits, never a commit acknowledged as Immediate, and never a middle one:
  // what survives is always a prefix of the commit order.
  Eventual = 0,
  // The commit completes only after its WAL write is synced (shared with the other commits of
  // its group, so concurrent commits share one sync).
  Immediate = 1,
};

enum class Compression : uint8_t {
  None = 0,
  Zstd = 1,
};

// What a transaction may do.
enum class Mode : uint8_t {
  ReadWrite = 0,
  ReadOnly = 1,   // reads only; writes fail with Code::ReadOnly
  WriteOnly = 2,  // blind writes only; reads fail with Code::InvalidArgument; no conflict checks
};

// Who writes the write-ahead log for a commit (Options::commit_pipeline).
enum class CommitPipeline : uint8_t {
  // The committing thread leads: it writes its commit and every commit queued behind it at once.
  Inline = 0,
  // commit() validates and queues only; the WAL write of everything queued runs as a task on the
  // platform's Executor. A single-threaded host that runs its executor once per turn of its
  // event loop (the browser worker) gets one WAL write, and at most one sync, per turn.
  Deferred = 1,
};

// Timestamps are nanoseconds since the Unix epoch. The largest one a write may carry: it fits a
// signed 64-bit integer, so every tool and binding (JSON, JavaScript's BigInt64) can hold it.
constexpr uint64_t kMaxTimestamp = (uint64_t{1} << 63) - 1;

// Whether a tree keeps versions by time (docs/versioning.md), and for how long.
struct Versioning {
  bool enabled = false;
  // How long, in nanoseconds, compaction keeps versions that a newer one replaced: every version
  // newer than now - retention_ns stays, plus the newest one at or before that cutoff, so a read
  // as of any time inside the window is exact. 0 keeps every version for ever.
  uint64_t retention_ns = 0;
  bool operator==(const Versioning&) const = default;
};

// Limits on single entries. Larger ones are refused with Code::InvalidArgument.
constexpr size_t kMaxKeySize = 64 * 1024 - 1;
constexpr size_t kMaxValueSize = 64 * 1024 * 1024;
// Limit on the memory one transaction's buffered writes may hold. It counts what is really held:
// every buffered version's key and value plus about 60 bytes of bookkeeping (a 40-byte header
// and a skiplist node), so at most about four million tiny writes fit; the versions a savepoint
// can still return to; and the versions an open iterator of the transaction still shows.
// Rewriting a key whose current version no savepoint and no iterator can see costs nothing more
// when the new value is no longer, and versions nothing needs are reclaimed. A set(), del() or
// set_savepoint() that could take the transaction past the limit is refused with
// Code::InvalidArgument, before anything is allocated; nothing changes and the transaction stays
// usable (rolling back to a savepoint or dropping iterators makes room again). Not counted:
// commit() encodes the writes once more (about their size) before the buffer is freed, and
// iterators' own small state. docs/transactions.md has the details.
constexpr size_t kMaxTransactionSize = 256 * 1024 * 1024;

struct Options {
  // Where the database lives (a directory natively).
  std::string path;
  // The platform that provides storage, time and background threads. Null means
  // default_platform(): POSIX files with skv::native (see TreeBuilder::build).
  std::shared_ptr<Platform> platform;
  bool create_if_missing = true;
  // Open an existing database to read it only (docs/cli.md, "Read-only opens"). The open writes
  // nothing: the WAL is replayed into memory (a torn tail is skipped, not cut), no file is
  // created, changed or removed, and no background work runs. The lock is shared: read-only trees
  // of one database may be open at once, in one process or several, but not beside a tree that
  // may write (Busy, whichever came second). begin() then starts Mode::ReadOnly transactions;
  // writes, flush(), compact_all(), collect_vlog_garbage() and rewrite_with_active_key() fail
  // with Code::ReadOnly. create_if_missing is ignored: a missing database is NotFound. In the
  // browser the open is exclusive like any other.
  bool read_only = false;
  // Permission bits of the files the tree creates (POSIX); the directory gets the matching search
  // bits. The default keeps every value readable by the owner only; 0640 or 0644 widen it. Must
  // include 0600 (the tree reads and writes its files) and nothing beyond 0777.
  uint32_t file_mode = 0600;

  // Size at which the active memtable is frozen and queued for flushing.
  size_t memtable_size = 64 * 1024 * 1024;
  // Frozen memtables that may wait for a flush before writers are stalled.
  int max_immutable_memtables = 2;

  // Target uncompressed size of an SSTable data block. Smaller blocks make a point read that
  // misses the block cache read, check and decompress less; larger ones make scans and
  // compression cheaper (docs/benchmarks.md, "Block size").
  size_t block_size = 16 * 1024;
  // Restart interval of prefix compression inside a block: a key is stored whole (and becomes a
  // binary-search point) every block_restart_interval entries, or sooner, once the entries since
  // the last such key hold block_restart_bytes bytes (0: by count only). A point read
  // binary-searches those keys and then walks entry by entry, so with large values a byte limit
  // keeps the walk to a few entries; small entries still share prefixes over the full interval.
  int block_restart_interval = 16;
  size_t block_restart_bytes = 1024;
  // Hard capacity of the block cache, in bytes (0 disables the cache).
  size_t block_cache_capacity = 64 * 1024 * 1024;
  // Compression of the tables compactions write from compression_start_level on (below), block
  // by block (docs/sstable.md).
  Compression compression = Compression::Zstd;
  int zstd_level = 1;
  // Compression of the tables a flush writes into L0. None by default: a flush then only copies
  // the memtable out, which keeps it short and its CPU off the two cores writers share, and reads
  // of recent data skip decompression; L0 holds a few memtables' worth, and compactions compress
  // the rows once they reach compression_start_level (docs/compaction.md, "Compression by
  // level").
  Compression flush_compression = Compression::None;
  // The first level whose tables compactions compress with `compression`; the levels from L1 to
  // the one above it store their blocks raw. 2 by default: L1 is rewritten by every compaction
  // out of L0 and holds the most recently compacted rows, so keeping it raw spares those
  // compactions, and the reads that miss the block cache there, a decompression. The raw part is
  // bounded by L1's size (level_base_bytes): about a tenth of a tree whose L2 is full, all of a
  // tree that fits in L1 (docs/compaction.md, "Compression by level"). 1 compresses L1 too;
  // level_count compresses nothing.
  int compression_start_level = 2;
  // Bloom filter bits per key (0 disables filters).
  int bloom_bits_per_key = 10;

  // Number of levels, L0 included.
  int level_count = 7;
  // L0 file count that triggers a compaction into L1.
  int l0_compaction_trigger = 4;
  // L0 file count at which writers are stalled until compaction catches up.
  int l0_stop_writes_trigger = 20;
  // Target size of L1; each deeper level is level_multiplier times larger.
  uint64_t level_base_bytes = 256ull * 1024 * 1024;
  int level_multiplier = 10;
  // Compaction outputs are split at about this size.
  uint64_t target_file_size = 64ull * 1024 * 1024;
  // Input bytes a background compaction reads per executor task before it yields (0: the whole
  // compaction in one task). A host whose executor shares one thread with the application (the
  // browser worker) sets it so that no single task holds that thread for long.
  uint64_t compaction_step_bytes = 0;

  // Encryption at rest (TreeBuilder::with_encryption, docs/encryption.md). With a key manager a
  // new database is created encrypted with `cipher` (unset: XChaCha20-Poly1305, which opens
  // everywhere); an existing one must be encrypted (Encryption/NotEncrypted otherwise) and opens
  // with the cipher it stores (a different explicit `cipher` is InvalidArgument). Without one an
  // encrypted database is Encryption/NotConfigured. Encryption cannot be added to a database
  // that exists.
  std::shared_ptr<KeyManager> key_manager;
  std::optional<CipherSuite> cipher;

  // Versioned queries (TreeBuilder::with_versioning). A database stores whether it is versioned.
  // Unset: a new database is not versioned, and an existing one opens as it was created. Set:
  // a new database is created so; an existing one must agree on `enabled` (InvalidArgument
  // otherwise, before anything changes), and a different retention replaces the stored one.
  std::optional<Versioning> versioning;
  // Key-value separation (docs/vlog.md). With it, a flush writes each value of at least
  // vlog_value_threshold bytes to a value log file and the table keeps a small pointer to it, so
  // compactions move pointers instead of values. Values already separated stay readable whatever
  // this is set to later.
  bool enable_vlog = false;
  // Values of at least this many bytes are separated (1 to kMaxValueSize).
  size_t vlog_value_threshold = 1024;
  // A flush or garbage collection moves to a new value log file once the one it writes reaches
  // about this size (at least 4 KiB; a single entry may take a file past it).
  uint64_t vlog_max_file_size = 128ull * 1024 * 1024;
  // A value log file is rewritten once this share of its entry bytes is garbage (no table points
  // at them any more); in (0, 1]. 1 rewrites nothing: a file is only removed once it is all
  // garbage.
  double vlog_gc_ratio = 0.5;
  // Hard capacity of the cache of values read from value logs, in bytes (0 disables it).
  size_t vlog_cache_capacity = 8 * 1024 * 1024;

  // Durability of a commit whose transaction did not choose one.
  Durability default_durability = Durability::Eventual;
  // With Deferred, a commit's future completes only once the executor has run: on a
  // non-concurrent executor, poll ready() between run_pending() calls instead of wait().
  CommitPipeline commit_pipeline = CommitPipeline::Inline;
};

}  // namespace skv

#endif  // SKV_OPTIONS_H_
