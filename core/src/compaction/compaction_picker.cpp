#include "compaction/compaction_picker.h"

#include <algorithm>

#include "format/internal_key.h"

namespace skv {
namespace {

// Fills output_inputs from the output level, over the user-key range of `inputs`.
void add_output_overlaps(Compaction* c) {
  std::string_view lo = extract_user_key(c->inputs.front()->smallest);
  std::string_view hi = extract_user_key(c->inputs.front()->largest);
  for (const auto& f : c->inputs) {
    if (compare_user_keys(extract_user_key(f->smallest), lo) < 0)
      lo = extract_user_key(f->smallest);
    if (compare_user_keys(extract_user_key(f->largest), hi) > 0) hi = extract_user_key(f->largest);
  }
  c->output_inputs = c->version->overlapping_files(c->output_level, lo, hi);
}

// Every file of `level` into level + 1, or, with `in_place`, rewritten into `level` itself (the
// deepest level, where the rewrite drops the versions and tombstones no snapshot needs).
std::unique_ptr<Compaction> whole_level(std::shared_ptr<const Version> v, int level,
                                        bool in_place = false) {
  auto c = std::make_unique<Compaction>();
  c->level = level;
  c->output_level = in_place ? level : level + 1;
  c->version = std::move(v);
  c->inputs = c->version->files(level);
  c->manual = true;
  if (!in_place) add_output_overlaps(c.get());
  return c;
}

}  // namespace

bool Compaction::is_trivial_move() const {
  return !manual && !recompress && relocate_vlogs.empty() && inputs.size() == 1 &&
         output_inputs.empty();
}

Compression compression_for_level(const Options& options, int level) {
  if (level == 0) return options.flush_compression;
  return level < options.compression_start_level ? Compression::None : options.compression;
}

int Compaction::first_deeper_level() const { return output_level == 0 ? 0 : output_level + 1; }

std::string_view Compaction::smallest_user_key() const {
  std::string_view lo;
  bool first = true;
  for (const auto* list : {&inputs, &output_inputs}) {
    for (const auto& f : *list) {
      std::string_view k = extract_user_key(f->smallest);
      if (first || compare_user_keys(k, lo) < 0) lo = k;
      first = false;
    }
  }
  return lo;
}

std::string_view Compaction::largest_user_key() const {
  std::string_view hi;
  bool first = true;
  for (const auto* list : {&inputs, &output_inputs}) {
    for (const auto& f : *list) {
      std::string_view k = extract_user_key(f->largest);
      if (first || compare_user_keys(k, hi) > 0) hi = k;
      first = false;
    }
  }
  return hi;
}

std::string_view Compaction::largest_input_key() const {
  std::string_view hi;
  for (const auto& f : inputs) {
    if (hi.empty() || compare_internal_keys(f->largest, hi) > 0) hi = f->largest;
  }
  return hi;
}

uint64_t level_target_bytes(const Options& options, int level) {
  uint64_t target = std::max<uint64_t>(options.level_base_bytes, 1);
  const uint64_t mult = static_cast<uint64_t>(std::max(options.level_multiplier, 1));
  for (int l = 1; l < level; ++l) {
    if (target > UINT64_MAX / mult) return UINT64_MAX;
    target *= mult;
  }
  return target;
}

double level_score(const Version& v, const Options& options, int level) {
  if (level >= v.level_count() - 1) return 0;
  if (level == 0) {
    return static_cast<double>(v.num_files(0)) /
           static_cast<double>(std::max(options.l0_compaction_trigger, 1));
  }
  return static_cast<double>(v.compensated_bytes(level)) /
         static_cast<double>(level_target_bytes(options, level));
}

namespace {

int best_level(const Version& v, const Options& options, double* score) {
  int best = -1;
  *score = 0;
  for (int level = 0; level + 1 < v.level_count(); ++level) {
    double s = level_score(v, options, level);
    if (s >= 1 && s > *score) {
      *score = s;
      best = level;
    }
  }
  return best;
}

}  // namespace

bool needs_compaction(const VersionSet& vset) {
  double score = 0;
  return best_level(*vset.current(), vset.options(), &score) >= 0;
}

std::unique_ptr<Compaction> pick_compaction(const VersionSet& vset) {
  std::shared_ptr<const Version> v = vset.current();
  double score = 0;
  const int level = best_level(*v, vset.options(), &score);
  if (level < 0) return nullptr;

  auto c = std::make_unique<Compaction>();
  c->level = level;
  c->output_level = level + 1;
  c->score = score;
  c->version = v;
  c->recompress = compression_for_level(vset.options(), level) !=
                  compression_for_level(vset.options(), level + 1);
  const auto& files = v->files(level);
  if (level == 0) {
    c->inputs = files;
  } else {
    // Round robin: the first file after the compact pointer, wrapping around.
    const std::string& pointer = vset.compact_pointer(level);
    auto it = files.begin();
    if (!pointer.empty()) {
      it = std::find_if(files.begin(), files.end(), [&](const FileMetaPtr& f) {
        return compare_internal_keys(f->largest, pointer) > 0;
      });
      if (it == files.end()) it = files.begin();
    }
    c->inputs.push_back(*it);
  }
  add_output_overlaps(c.get());
  return c;
}

std::unique_ptr<Compaction> pick_manual_all(const VersionSet& vset, int start_level) {
  std::shared_ptr<const Version> v = vset.current();
  int deepest = -1;
  for (int level = 0; level < v->level_count(); ++level) {
    if (v->num_files(level) > 0) deepest = level;
  }
  if (deepest < 0) return nullptr;
  start_level = std::max(start_level, 0);
  if (deepest == 0) {
    return start_level == 0 ? whole_level(std::move(v), 0) : nullptr;
  }
  for (int level = start_level; level < deepest; ++level) {
    if (v->num_files(level) > 0) return whole_level(std::move(v), level);
  }
  // Everything is in the deepest level now: rewrite it once so garbage collection runs there.
  if (start_level <= deepest) return whole_level(std::move(v), deepest, true);
  return nullptr;
}

}  // namespace skv

namespace skv {

std::vector<uint64_t> vlogs_over_ratio(const Version& v, double ratio) {
  std::vector<uint64_t> out;
  for (const auto& u : v.vlog_files()) {
    if (u.garbage_share() >= ratio) out.push_back(u.meta.number);
  }
  return out;
}

bool needs_vlog_gc(const VersionSet& vset) {
  // Exactly when there is something to pick, so the scheduler never waits for a pick that fails.
  return pick_vlog_gc(vset) != nullptr;
}

std::unique_ptr<Compaction> pick_vlog_gc(const VersionSet& vset) {
  std::shared_ptr<const Version> v = vset.current();
  std::vector<uint64_t> targets = vlogs_over_ratio(*v, vset.options().vlog_gc_ratio);
  if (targets.empty()) return nullptr;
  auto points_into_target = [&](const FileMetaData& f) {
    return std::any_of(f.vlog_refs.begin(), f.vlog_refs.end(), [&](const VlogRef& r) {
      return std::binary_search(targets.begin(), targets.end(), r.vlog_number);
    });
  };
  for (int level = 0; level < v->level_count(); ++level) {
    for (const auto& f : v->files(level)) {
      if (!points_into_target(*f)) continue;
      auto c = std::make_unique<Compaction>();
      c->level = level;
      c->output_level = level;
      c->version = v;
      c->inputs.push_back(f);
      c->relocate_vlogs = std::move(targets);
      return c;
    }
  }
  return nullptr;  // unreachable: a live value log is pointed into (Version checks it)
}

}  // namespace skv
