// Compaction picking: which files to merge next, and into which level.
//
// Each level but the last gets a score: L0 by file count (files / l0_compaction_trigger, since
// every L0 file may have to be read on a lookup), deeper levels by size (bytes / target, where
// target(L1) = level_base_bytes and each deeper level is level_multiplier times larger). The size
// is compensated (Version::compensated_bytes): a table counts at least its entries times the
// tree's average entry size, so tombstones, which are small, still push their level down until
// they meet the data they hide and both are dropped; without it a level of tombstones stays under
// its target and the space they should free stays taken. The level with the highest score >= 1
// is compacted into the next one:
//   - L0: every L0 file, plus the L1 files overlapping their combined key range;
//   - Ln: one file, chosen round robin (the first after the level's compact pointer), plus the
//     Ln+1 files overlapping it.
// Because no user key spans two files of a level, no further widening is needed.
//
// Value log garbage collection (docs/vlog.md) is a compaction too, picked when no level needs
// one: a relocation rewrites one table that points into a value log whose garbage share reached
// Options::vlog_gc_ratio, in place (output_level == level), moving the values it still needs
// out of every such value log.
//
// Thread safety: call under the tree's mutex (it reads the VersionSet). The Compaction returned
// is a plain value that holds its input Version, so the job may run without the mutex. The tree
// runs at most one compaction at a time.

#ifndef SKV_COMPACTION_COMPACTION_PICKER_H_
#define SKV_COMPACTION_COMPACTION_PICKER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skv/options.h"
#include "version/version.h"
#include "version/version_set.h"

namespace skv {

struct Compaction {
  int level = 0;         // the level the inputs come from
  int output_level = 1;  // level + 1 (level itself for an in-place rewrite of the deepest)
  std::shared_ptr<const Version> version;  // the inputs belong to it; keeps them alive
  std::vector<FileMetaPtr> inputs;         // files of `level`, in the level's order
  std::vector<FileMetaPtr> output_inputs;  // files of output_level overlapping the inputs
  double score = 0;                        // the score that triggered it; 0 when manual
  bool manual = false;                     // from pick_manual_all: never a trivial move
  // The output level's tables are compressed differently from the input level's
  // (compression_for_level): never a trivial move, so the table is rewritten the new way.
  bool recompress = false;
  // Garbage collection: the value logs (ascending) whose entries the outputs' pointers move out
  // of. Empty for an ordinary compaction.
  std::vector<uint64_t> relocate_vlogs;

  // True if the compaction can be done by moving its single input file one level down without
  // rewriting it: one input, nothing overlapping in output_level, not manual, not a relocation,
  // not a recompression.
  bool is_trivial_move() const;
  // The first level whose files count as "deeper" when tombstones are dropped: output_level + 1,
  // except for an in-place rewrite of an L0 table, where the other L0 tables (older ones among
  // them) count too, so it is 0.
  int first_deeper_level() const;
  // The smallest and largest user keys over every input (inputs and output_inputs).
  std::string_view smallest_user_key() const;
  std::string_view largest_user_key() const;
  // The largest internal key of `inputs`: the level's next compact pointer.
  std::string_view largest_input_key() const;
};

// How the tables written into `level` compress their blocks: Options::flush_compression for L0,
// none from L1 to the level above Options::compression_start_level, Options::compression from
// that level on.
Compression compression_for_level(const Options& options, int level);

// The score of `level` in `v` (see above). 0 for the last level.
double level_score(const Version& v, const Options& options, int level);
// The target size of `level` >= 1 in bytes.
uint64_t level_target_bytes(const Options& options, int level);

// True if some level has a score >= 1.
bool needs_compaction(const VersionSet& vset);

// The compaction of the level with the highest score >= 1 in vset.current(), or null if none.
std::unique_ptr<Compaction> pick_compaction(const VersionSet& vset);

// One step of compacting everything down (Tree::compact_all): every file of the shallowest
// non-empty level L >= start_level that lies above the deepest non-empty level, plus the
// overlapping files of L+1, into L+1. When only L0 holds files, L0 goes into L1. When no level
// in [start_level, deepest) holds files, the deepest level is rewritten in place
// (output_level == level), which drops what no snapshot needs. Null when nothing is left to do.
// Loop with start_level = previous->level + 1 to finish:
//   int start = 0;
//   while (auto c = pick_manual_all(vset, start)) { run, log_and_apply; start = c->level + 1; }
std::unique_ptr<Compaction> pick_manual_all(const VersionSet& vset, int start_level);

// The live value logs of `v` whose garbage share (VlogUsage::garbage_share) is at least `ratio`,
// by ascending number.
std::vector<uint64_t> vlogs_over_ratio(const Version& v, double ratio);

// True if some value log of vset.current() passes Options::vlog_gc_ratio (and so pick_vlog_gc
// returns a compaction).
bool needs_vlog_gc(const VersionSet& vset);

// The next garbage collection step: the first table (L0 first, then each level in key order)
// that points into a value log passing Options::vlog_gc_ratio, rewritten in place, with every
// passing value log to relocate. Null when no value log passes.
std::unique_ptr<Compaction> pick_vlog_gc(const VersionSet& vset);

}  // namespace skv

#endif  // SKV_COMPACTION_COMPACTION_PICKER_H_
