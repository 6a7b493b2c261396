#include "compaction/compaction_job.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "format/internal_key.h"
#include "iterator/merging_iterator.h"
#include "sstable/table_builder.h"
#include "version/level_iterator.h"
#include "wal/wal_files.h"

namespace skv {
namespace {

// Answers "does any file at or below first_level cover this user key?" for keys asked in
// ascending order: one cursor per sorted level only ever moves forward.
class DeeperLevels {
 public:
  DeeperLevels(const Version* v, int first_level) : v_(v), first_level_(std::max(first_level, 0)) {
    if (v_ != nullptr) pos_.assign(static_cast<size_t>(v_->level_count()), 0);
  }

  bool covers(std::string_view user_key) {
    if (v_ == nullptr) return false;
    for (int level = first_level_; level < v_->level_count(); ++level) {
      const auto& files = v_->files(level);
      if (level == 0) {
        for (const auto& f : files) {
          if (file_overlaps_range(*f, user_key, user_key)) return true;
        }
        continue;
      }
      size_t& i = pos_[static_cast<size_t>(level)];
      while (i < files.size() &&
             compare_user_keys(extract_user_key(files[i]->largest), user_key) < 0) {
        ++i;
      }
      if (i < files.size() &&
          compare_user_keys(extract_user_key(files[i]->smallest), user_key) <= 0) {
        return true;
      }
    }
    return false;
  }

 private:
  const Version* v_;
  const int first_level_;
  std::vector<size_t> pos_;
};

// The outputs being written; removes every one of them unless commit() was called.
class OutputSet {
 public:
  OutputSet(const JobContext& ctx, SortedRunOutput* out)
      : ctx_(ctx), out_(out), table_options_(table_options_from(*ctx.options)) {}
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet() {
    if (committed_) return;
    if (builder_ != nullptr) builder_->abandon();
    for (const auto& f : out_->files) {
      (void)ctx_.storage->objects().remove(table_file_name(f.number));
    }
    out_->files.clear();
  }

  bool open() const { return builder_ != nullptr; }
  uint64_t current_size() const { return builder_->estimated_file_size(); }

  Status add(std::string_view ikey, const ParsedInternalKey& parsed, std::string_view value) {
    if (builder_ == nullptr) {
      meta_ = FileMetaData();
      meta_.number = ctx_.new_file_number();
      SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectWriter> writer,
                           ctx_.storage->objects().create(table_file_name(meta_.number)));
      builder_ = std::make_unique<TableBuilder>(table_options_, std::move(writer), meta_.number);
      meta_.smallest.assign(ikey.data(), ikey.size());
      meta_.smallest_seq = parsed.sequence;
      meta_.largest_seq = parsed.sequence;
    }
    SKV_RETURN_IF_ERROR(builder_->add(ikey, value));
    meta_.largest.assign(ikey.data(), ikey.size());
    meta_.smallest_seq = std::min(meta_.smallest_seq, parsed.sequence);
    meta_.largest_seq = std::max(meta_.largest_seq, parsed.sequence);
    return Status::ok();
  }

  // Finishes the table being built (durable) and records it.
  Status finish_current() {
    SKV_RETURN_IF_ERROR(builder_->finish());
    meta_.file_size = builder_->file_size();
    meta_.num_entries = builder_->num_entries();
    out_->bytes_written += meta_.file_size;
    builder_.reset();
    out_->files.push_back(std::move(meta_));
    return Status::ok();
  }

  // Makes the directory entries durable and keeps the outputs.
  Status commit() {
    if (!out_->files.empty()) SKV_RETURN_IF_ERROR(ctx_.storage->sync_dir());
    committed_ = true;
    return Status::ok();
  }

 private:
  const JobContext& ctx_;
  SortedRunOutput* const out_;
  const TableOptions table_options_;
  std::unique_ptr<TableBuilder> builder_;
  FileMetaData meta_;
  bool committed_ = false;
};

}  // namespace

TableOptions table_options_from(const Options& options) {
  TableOptions t;
  t.block_size = options.block_size;
  t.block_restart_interval = options.block_restart_interval;
  t.compression = options.compression;
  t.zstd_level = options.zstd_level;
  t.bloom_bits_per_key = options.bloom_bits_per_key;
  return t;
}

Status write_sorted_run(InternalIterator* input, const JobContext& ctx, const Version* version,
                        int first_deeper_level, uint64_t target_file_size, SortedRunOutput* out) {
  *out = SortedRunOutput();
  std::vector<SequenceNumber> snapshots = ctx.snapshots;
  std::sort(snapshots.begin(), snapshots.end());
  DeeperLevels deeper(version, first_deeper_level);
  OutputSet outputs(ctx, out);

  std::string user_key;  // the user key of the previous entry
  bool have_key = false;
  size_t prev_stripe = 0;  // stripe of the previous entry of the same user key
  bool drop_rest = false;  // a tombstone of this key was dropped: so is everything older

  for (input->seek_first(); input->valid(); input->next()) {
    const std::string_view ikey = input->key();
    ParsedInternalKey parsed;
    if (!parse_internal_key(ikey, &parsed)) {
      return Status::corruption("compaction input: malformed internal key of " +
                                std::to_string(ikey.size()) + " bytes");
    }
    ++out->entries_read;
    const bool first_of_key = !have_key || parsed.user_key != user_key;
    // Stripes are numbered from the oldest (0: seq <= s1) to "latest" (snapshots.size()).
    const size_t stripe = static_cast<size_t>(
        std::lower_bound(snapshots.begin(), snapshots.end(), parsed.sequence) - snapshots.begin());

    bool drop = false;
    if (first_of_key) {
      user_key.assign(parsed.user_key.data(), parsed.user_key.size());
      have_key = true;
      drop_rest = false;
    } else if (drop_rest || stripe == prev_stripe) {
      drop = true;  // hidden by a newer version every reader of this stripe sees first
    }
    if (!drop && parsed.kind == ValueKind::Delete && stripe == 0 &&
        !deeper.covers(parsed.user_key)) {
      drop = true;
      drop_rest = true;
    }
    prev_stripe = stripe;
    if (drop) {
      ++out->entries_dropped;
      continue;
    }

    // Split only between user keys, so one key's versions always share a table.
    if (outputs.open() && first_of_key && outputs.current_size() >= target_file_size) {
      SKV_RETURN_IF_ERROR(outputs.finish_current());
    }
    SKV_RETURN_IF_ERROR(outputs.add(ikey, parsed, input->value()));
  }
  SKV_RETURN_IF_ERROR(input->status());
  if (outputs.open()) SKV_RETURN_IF_ERROR(outputs.finish_current());
  return outputs.commit();
}

Status run_compaction(const Compaction& c, const JobContext& ctx, VersionEdit* edit,
                      SortedRunOutput* out) {
  SortedRunOutput local;
  if (out == nullptr) out = &local;
  *out = SortedRunOutput();

  if (c.is_trivial_move()) {
    const FileMetaPtr& f = c.inputs.front();
    edit->delete_file(c.level, f->number);
    edit->add_file(c.output_level, *f);
    edit->set_compact_pointer(c.level, c.largest_input_key());
    out->files.push_back(*f);
    return Status::ok();
  }

  TableReadOptions read_options;
  read_options.fill_cache = false;
  std::vector<std::unique_ptr<InternalIterator>> children;
  std::shared_ptr<const void> pin = c.version;
  if (c.level == 0) {
    for (const auto& f : c.inputs) {
      children.push_back(new_level_iterator(pin, ctx.table_cache, {f}, read_options));
    }
  } else if (!c.inputs.empty()) {
    children.push_back(new_level_iterator(pin, ctx.table_cache, c.inputs, read_options));
  }
  if (!c.output_inputs.empty()) {
    children.push_back(new_level_iterator(pin, ctx.table_cache, c.output_inputs, read_options));
  }
  std::unique_ptr<InternalIterator> merged = new_merging_iterator(std::move(children));

  SKV_RETURN_IF_ERROR(write_sorted_run(merged.get(), ctx, c.version.get(), c.output_level + 1,
                                       ctx.options->target_file_size, out));
  for (const auto& f : c.inputs) edit->delete_file(c.level, f->number);
  for (const auto& f : c.output_inputs) edit->delete_file(c.output_level, f->number);
  for (const auto& f : out->files) edit->add_file(c.output_level, f);
  if (!c.inputs.empty()) edit->set_compact_pointer(c.level, c.largest_input_key());
  return Status::ok();
}

Status write_level0_table(InternalIterator* memtable_iter, const JobContext& ctx,
                          const Version* version, FileMetaData* out) {
  *out = FileMetaData();
  SortedRunOutput run;
  SKV_RETURN_IF_ERROR(
      write_sorted_run(memtable_iter, ctx, version, 0, std::numeric_limits<uint64_t>::max(), &run));
  if (!run.files.empty()) *out = std::move(run.files.front());
  return Status::ok();
}

}  // namespace skv
