// Compaction picking: which files to merge next, and into which level.
//
// Each level but the last gets a score: L0 by file count (files / l0_compaction_trigger, since
// every L0 file may have to be read on a lookup), deeper levels by size (bytes / target, where
// target(L1) = level_base_bytes and each deeper level is level_multiplier times larger). The level
// with the highest score >= 1 is compacted into the next one:
//   - L0: every L0 file, plus the L1 files overlapping their combined key range;
//   - Ln: one file, chosen round robin (the first after the level's compact pointer), plus the
//     Ln+1 files overlapping it.
// Because no user key spans two files of a level, no further widening is needed.
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

  // True if the compaction can be done by moving its single input file one level down without
  // rewriting it: one input, nothing overlapping in output_level, not manual.
  bool is_trivial_move() const;
  // The smallest and largest user keys over every input (inputs and output_inputs).
  std::string_view smallest_user_key() const;
  std::string_view largest_user_key() const;
  // The largest internal key of `inputs`: the level's next compact pointer.
  std::string_view largest_input_key() const;
};

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

}  // namespace skv

#endif  // SKV_COMPACTION_COMPACTION_PICKER_H_
