#include "compaction/compaction_job.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "compaction/vlog_output.h"
#include "format/file_names.h"
#include "format/internal_key.h"
#include "iterator/merging_iterator.h"
#include "sstable/table_builder.h"
#include "util/coding.h"
#include "util/status_macros.h"
#include "version/level_iterator.h"
#include "vlog/value_pointer.h"

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

// Reads the values a garbage collection moves. A relocation visits a table's entries in key order,
// and a value log holds the values of one flush or compaction in key order too, so the entries it
// reads from one value log come at rising offsets (a table compacted from several flushes points
// into several value logs, its entries alternating between them). Instead of one positional read
// per value, it keeps, for each of the last kMaxFiles value logs it read, kReadAhead bytes read
// from an entry on, and decodes the entries after it from them (checked as a single read is:
// lengths, checksum, key). A value larger than kReadAhead is read alone.
class RelocationReader {
 public:
  static constexpr size_t kReadAhead = 64 * 1024;
  static constexpr size_t kMaxFiles = 8;

  explicit RelocationReader(VlogCache* cache) : cache_(cache) {}

  // Sets *value to the value `p` points at, which must be stored under `key`. Errors as
  // VlogCache::reader() and VlogReader::get().
  Status read(const vlog::ValuePointer& p, std::string_view key, std::string* value) {
    SKV_ASSIGN_OR_RETURN(Span * span, span_of(p.file_number));
    span->last_use = ++clock_;
    const vlog::VlogReader& reader = *span->reader;
    if (p.size > kReadAhead) return reader.get(p, key, value);
    const bool held = p.offset >= span->offset && p.size <= span->size &&
                      p.offset - span->offset <= span->size - p.size;
    if (!held) {
      // Holds the whole entry, or everything the file has from p.offset on (get_in then
      // reports an entry that runs past the end).
      if (span->bytes == nullptr) span->bytes.reset(new char[kReadAhead]);
      std::string_view got;
      SKV_RETURN_IF_ERROR(reader.read_span(p.offset, kReadAhead, span->bytes.get(), &got));
      span->offset = p.offset;
      span->size = got.size();
    }
    return reader.get_in(p, key, {span->bytes.get(), span->size}, span->offset, value);
  }

 private:
  struct Span {
    std::shared_ptr<const vlog::VlogReader> reader;
    std::unique_ptr<char[]> bytes;  // kReadAhead bytes; the first `size` are the file's from
    size_t size = 0;                // `offset` on
    uint64_t offset = 0;
    uint64_t last_use = 0;
  };

  // The span kept for value log `number`, a new empty one (dropping the least recently used
  // when kMaxFiles are kept) if there is none.
  Result<Span*> span_of(uint64_t number) {
    auto it = spans_.find(number);
    if (it != spans_.end()) return &it->second;
    SKV_ASSIGN_OR_RETURN(std::shared_ptr<const vlog::VlogReader> reader, cache_->reader(number));
    if (spans_.size() >= kMaxFiles) {
      auto oldest = std::min_element(
          spans_.begin(), spans_.end(),
          [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
      spans_.erase(oldest);
    }
    Span& span = spans_[number];
    span.reader = std::move(reader);
    return &span;
  }

  VlogCache* const cache_;
  std::map<uint64_t, Span> spans_;  // by value log number
  uint64_t clock_ = 0;
};

// The outputs being written, tables and value logs; removes every one of them unless commit()
// was called.
class OutputSet {
 public:
  OutputSet(const JobContext& ctx, SortedRunOutput* out, const VlogPolicy& policy)
      : ctx_(ctx),
        out_(out),
        table_options_(table_options_from(*ctx.options)),
        policy_(policy),
        vlog_(ctx.storage, ctx.new_file_number, ctx.options->vlog_max_file_size, ctx.ciphers),
        relocation_reader_(ctx.vlog_cache) {}
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
  // Value bytes read from value logs being rewritten and written again, so far.
  uint64_t bytes_moved() const { return moved_; }
  uint64_t current_size() const { return builder_->estimated_file_size(); }

  Status add(std::string_view ikey, const ParsedInternalKey& parsed, std::string_view value) {
    if (builder_ == nullptr) {
      meta_ = FileMetaData();
      SKV_ASSIGN_OR_RETURN(meta_.number, ctx_.new_file_number());
      std::shared_ptr<const crypto::FileCipher> cipher;
      if (ctx_.ciphers != nullptr) {
        SKV_ASSIGN_OR_RETURN(cipher, ctx_.ciphers->for_new_file(FileKind::Table, meta_.number,
                                                                ctx_.storage->location() + "/" +
                                                                    table_file_name(meta_.number)));
      }
      SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectWriter> writer,
                           ctx_.storage->objects().create(table_file_name(meta_.number)));
      builder_ = std::make_unique<TableBuilder>(table_options_, std::move(writer), meta_.number,
                                                std::move(cipher));
      meta_.smallest_seq = parsed.sequence;
      meta_.largest_seq = parsed.sequence;
      refs_.clear();
    }
    std::string_view stored_key = ikey;
    std::string_view stored_value = value;
    SKV_RETURN_IF_ERROR(place_value(ikey, parsed, &stored_key, &stored_value));
    SKV_RETURN_IF_ERROR(builder_->add(stored_key, stored_value));
    if (meta_.smallest.empty()) meta_.smallest.assign(stored_key.data(), stored_key.size());
    meta_.largest.assign(stored_key.data(), stored_key.size());
    meta_.smallest_seq = std::min(meta_.smallest_seq, parsed.sequence);
    meta_.largest_seq = std::max(meta_.largest_seq, parsed.sequence);
    return Status::OK();
  }

  // Finishes the table being built (durable) and records it. The value log entries it points at
  // are made durable first.
  Status finish_current() {
    SKV_RETURN_IF_ERROR(vlog_.sync());
    for (const auto& [number, bytes] : refs_) meta_.vlog_refs.push_back(VlogRef{number, bytes});
    SKV_RETURN_IF_ERROR(builder_->finish());
    meta_.file_size = builder_->file_size();
    meta_.num_entries = builder_->num_entries();
    out_->bytes_written += meta_.file_size;
    builder_.reset();
    out_->files.push_back(std::move(meta_));
    return Status::OK();
  }

  // Makes the directory entries durable and keeps the outputs.
  Status commit() {
    SKV_RETURN_IF_ERROR(vlog_.finish(&out_->vlog_files));
    out_->vlog_bytes_moved = moved_;
    if (!out_->files.empty()) SKV_RETURN_IF_ERROR(ctx_.storage->sync_dir());
    committed_ = true;
    return Status::OK();
  }

 private:
  // Decides what the table stores for one entry: the entry as it is, or (for a value the policy
  // separates or relocates) the key with kind ValuePointer and a new pointer. Counts the value
  // log bytes the table points at.
  Status place_value(std::string_view ikey, const ParsedInternalKey& parsed,
                     std::string_view* stored_key, std::string_view* stored_value) {
    vlog::ValuePointer p;
    if (parsed.kind == ValueKind::Value) {
      if (policy_.separate_threshold == 0 || stored_value->size() < policy_.separate_threshold) {
        return Status::OK();
      }
      SKV_ASSIGN_OR_RETURN(p, vlog_.add(parsed.user_key, *stored_value));
      key_buf_.assign(ikey.data(), ikey.size());
      encode_fixed64(key_buf_.data() + parsed.user_key.size(),
                     pack_trailer(parsed.sequence, ValueKind::ValuePointer));
      *stored_key = key_buf_;
    } else if (parsed.kind == ValueKind::ValuePointer) {
      Result<vlog::ValuePointer> decoded = vlog::decode_value_pointer(*stored_value);
      if (!decoded.ok()) {
        return Status::corruption("compaction input: value pointer of key \"" +
                                  std::string(parsed.user_key) +
                                  "\": " + decoded.status().message());
      }
      p = *decoded;
      if (!std::binary_search(policy_.relocate.begin(), policy_.relocate.end(), p.file_number)) {
        refs_[p.file_number] += p.size;
        return Status::OK();
      }
      SKV_RETURN_IF_ERROR(relocation_reader_.read(p, parsed.user_key, &value_buf_));
      moved_ += p.size;
      SKV_ASSIGN_OR_RETURN(p, vlog_.add(parsed.user_key, value_buf_));
    } else {
      return Status::OK();
    }
    refs_[p.file_number] += p.size;
    pointer_buf_.clear();
    vlog::encode_value_pointer(p, &pointer_buf_);
    *stored_value = pointer_buf_;
    return Status::OK();
  }

  const JobContext& ctx_;
  SortedRunOutput* const out_;
  const TableOptions table_options_;
  const VlogPolicy policy_;
  VlogOutput vlog_;  // destroyed after builder_, removing its files unless finished
  RelocationReader relocation_reader_;
  std::unique_ptr<TableBuilder> builder_;
  FileMetaData meta_;
  std::map<uint64_t, uint64_t> refs_;  // value log bytes the table being built points at
  std::string key_buf_, pointer_buf_, value_buf_;
  uint64_t moved_ = 0;
  bool committed_ = false;
};

}  // namespace

TableOptions table_options_from(const Options& options) {
  TableOptions t;
  t.block_size = options.block_size;
  t.block_restart_interval = options.block_restart_interval;
  t.block_restart_bytes = options.block_restart_bytes;
  t.compression = options.compression;
  t.zstd_level = options.zstd_level;
  t.bloom_bits_per_key = options.bloom_bits_per_key;
  return t;
}

namespace {

// Writes a sorted run in steps (see write_sorted_run for what it writes). The garbage
// collection state of the key being written carries over from one step to the next.
class SortedRunWriter {
 public:
  SortedRunWriter(InternalIterator* input, JobContext ctx, const Version* version,
                  int first_deeper_level, uint64_t target_file_size, SortedRunOutput* out,
                  const VlogPolicy& policy)
      : input_(input),
        ctx_(std::move(ctx)),
        deeper_(version, first_deeper_level),
        target_file_size_(target_file_size),
        out_(out),
        outputs_(ctx_, out, policy) {
    *out_ = SortedRunOutput();
    snapshots_ = ctx_.snapshots;
    std::sort(snapshots_.begin(), snapshots_.end());
  }

  // Reads entries until the input ends (*done: the outputs are durable and kept) or, with a
  // non-zero `budget_bytes`, until about that many bytes were read: the entries' keys and stored
  // values, and the values moved out of value logs being rewritten (a pointer of a few bytes
  // can stand for a value of megabytes).
  Status step(uint64_t budget_bytes, bool* done) {
    *done = false;
    if (!started_) {
      input_->seek_first();
      started_ = true;
    }
    uint64_t read = 0;
    for (; input_->valid(); input_->next()) {
      if (budget_bytes != 0 && read >= budget_bytes) return Status::OK();
      const std::string_view ikey = input_->key();
      const uint64_t moved_before = outputs_.bytes_moved();
      read += ikey.size() + input_->value().size();
      SKV_RETURN_IF_ERROR(add(ikey));
      read += outputs_.bytes_moved() - moved_before;
    }
    SKV_RETURN_IF_ERROR(input_->status());
    if (outputs_.open()) SKV_RETURN_IF_ERROR(outputs_.finish_current());
    SKV_RETURN_IF_ERROR(outputs_.commit());
    *done = true;
    return Status::OK();
  }

 private:
  Status add(std::string_view ikey) {
    ParsedInternalKey parsed;
    if (!parse_internal_key(ikey, &parsed)) {
      return Status::corruption("compaction input: malformed internal key of " +
                                std::to_string(ikey.size()) + " bytes");
    }
    ++out_->entries_read;
    const bool first_of_key = !have_key_ || parsed.user_key != user_key_;
    // Stripes are numbered from the oldest (0: seq <= s1) to "latest" (snapshots.size()).
    const size_t stripe = static_cast<size_t>(
        std::lower_bound(snapshots_.begin(), snapshots_.end(), parsed.sequence) -
        snapshots_.begin());
    if (first_of_key) {
      user_key_.assign(parsed.user_key.data(), parsed.user_key.size());
      have_key_ = true;
      drop_rest_ = false;
    }
    const Decision d = ctx_.retention_cutoff ? decide_by_time(parsed, stripe, first_of_key)
                                             : decide_by_snapshots(parsed, stripe, first_of_key);
    prev_stripe_ = stripe;
    if (d == Decision::Drop) {
      ++out_->entries_dropped;
      return Status::OK();
    }
    return write(ikey, parsed, input_->value(), first_of_key);
  }

  enum class Decision { Keep, Drop };

  // Unversioned: the newest version of each stripe, tombstones dropped in the oldest stripe.
  Decision decide_by_snapshots(const ParsedInternalKey& parsed, size_t stripe, bool first_of_key) {
    if (!first_of_key && (drop_rest_ || stripe == prev_stripe_)) {
      return Decision::Drop;  // hidden by a newer version every reader of this stripe sees first
    }
    if (parsed.kind == ValueKind::Delete && stripe == 0 && !deeper_.covers(parsed.user_key)) {
      drop_rest_ = true;
      return Decision::Drop;
    }
    return Decision::Keep;
  }

  // Versioned: by time within each stripe (see compaction_job.h).
  Decision decide_by_time(const ParsedInternalKey& parsed, size_t stripe, bool first_of_key) {
    const uint64_t cutoff = *ctx_.retention_cutoff;
    if (first_of_key || stripe != time_stripe_) {
      time_stripe_ = stripe;
      have_old_ = false;
    }
    if (parsed.timestamp <= cutoff) {
      // Hidden, as of any time from the cutoff on, by the version at or before the cutoff kept
      // before it in this stripe, which has a later timestamp (or the same and a later commit).
      if (have_old_ && parsed.timestamp <= newest_old_ts_) return Decision::Drop;
      have_old_ = true;
      newest_old_ts_ = parsed.timestamp;
    }
    return Decision::Keep;
  }

  Status write(std::string_view ikey, const ParsedInternalKey& parsed, std::string_view value,
               bool first_of_key) {
    // Split only between user keys, so one key's versions always share a table.
    if (outputs_.open() && first_of_key && outputs_.current_size() >= target_file_size_) {
      SKV_RETURN_IF_ERROR(outputs_.finish_current());
    }
    return outputs_.add(ikey, parsed, value);
  }

  InternalIterator* const input_;
  const JobContext ctx_;  // before outputs_, which refers to it
  std::vector<SequenceNumber> snapshots_;
  DeeperLevels deeper_;
  const uint64_t target_file_size_;
  SortedRunOutput* const out_;
  OutputSet outputs_;
  bool started_ = false;
  std::string user_key_;  // the user key of the previous entry
  bool have_key_ = false;
  size_t prev_stripe_ = 0;  // stripe of the previous entry of the same user key
  bool drop_rest_ = false;  // a tombstone of this key was dropped: so is everything older
  // Versioned trees: the stripe being decided by time, and the newest timestamp at or before the
  // cutoff kept in it so far.
  size_t time_stripe_ = 0;
  bool have_old_ = false;
  uint64_t newest_old_ts_ = 0;
};

// The merged input of a (non-trivial) compaction.
std::unique_ptr<InternalIterator> compaction_input(const Compaction& c, const JobContext& ctx) {
  TableReadOptions read_options;
  read_options.fill_cache = false;
  read_options.readahead = true;
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
  return new_merging_iterator(std::move(children));
}

void record_compaction(const Compaction& c, const SortedRunOutput& out, VersionEdit* edit) {
  for (const auto& f : c.inputs) edit->delete_file(c.level, f->number);
  for (const auto& f : c.output_inputs) edit->delete_file(c.output_level, f->number);
  for (const auto& f : out.files) edit->add_file(c.output_level, f);
  for (const auto& v : out.vlog_files) edit->add_vlog_file(v);
  // A relocation rewrites one table in place: the level's round robin stays where it was.
  if (!c.inputs.empty() && c.relocate_vlogs.empty()) {
    edit->set_compact_pointer(c.level, c.largest_input_key());
  }
}

VlogPolicy compaction_policy(const Compaction& c) {
  VlogPolicy policy;
  policy.relocate = c.relocate_vlogs;
  return policy;
}

// `ctx` for a job writing tables into `level`: `*options` is set to ctx's options with that
// level's compression, and the returned context points at it.
JobContext context_for_level(const JobContext& ctx, int level, Options* options) {
  *options = *ctx.options;
  options->compression = compression_for_level(*ctx.options, level);
  JobContext out = ctx;
  out.options = options;
  return out;
}

void record_trivial_move(const Compaction& c, VersionEdit* edit, SortedRunOutput* out) {
  const FileMetaPtr& f = c.inputs.front();
  edit->delete_file(c.level, f->number);
  edit->add_file(c.output_level, *f);
  edit->set_compact_pointer(c.level, c.largest_input_key());
  out->files.push_back(*f);
}

}  // namespace

Status write_sorted_run(InternalIterator* input, const JobContext& ctx, const Version* version,
                        int first_deeper_level, uint64_t target_file_size, SortedRunOutput* out,
                        const VlogPolicy& policy) {
  SortedRunWriter writer(input, ctx, version, first_deeper_level, target_file_size, out, policy);
  bool done = false;
  return writer.step(0, &done);
}

Status run_compaction(const Compaction& c, const JobContext& ctx, VersionEdit* edit,
                      SortedRunOutput* out) {
  SortedRunOutput local;
  if (out == nullptr) out = &local;
  *out = SortedRunOutput();
  if (c.is_trivial_move()) {
    record_trivial_move(c, edit, out);
    return Status::OK();
  }
  std::unique_ptr<InternalIterator> merged = compaction_input(c, ctx);
  Options options;
  const JobContext out_ctx = context_for_level(ctx, c.output_level, &options);
  SKV_RETURN_IF_ERROR(write_sorted_run(merged.get(), out_ctx, c.version.get(),
                                       c.first_deeper_level(), ctx.options->target_file_size, out,
                                       compaction_policy(c)));
  record_compaction(c, *out, edit);
  return Status::OK();
}

struct CompactionJob::Rep {
  Options options;  // the job's, with its output level's compression; the writer points at it
  std::unique_ptr<Compaction> c;
  std::unique_ptr<InternalIterator> input;
  SortedRunOutput out;
  std::unique_ptr<SortedRunWriter> writer;
  VersionEdit edit;
};

CompactionJob::CompactionJob(std::unique_ptr<Compaction> c, const JobContext& ctx)
    : rep_(std::make_unique<Rep>()) {
  rep_->c = std::move(c);
  if (!rep_->c->is_trivial_move()) {
    rep_->input = compaction_input(*rep_->c, ctx);
    rep_->writer = std::make_unique<SortedRunWriter>(
        rep_->input.get(), context_for_level(ctx, rep_->c->output_level, &rep_->options),
        rep_->c->version.get(), rep_->c->first_deeper_level(), ctx.options->target_file_size,
        &rep_->out, compaction_policy(*rep_->c));
  }
}

// The writer (which removes unfinished outputs) goes before the input it reads.
CompactionJob::~CompactionJob() {
  if (rep_ != nullptr) rep_->writer.reset();
}

Status CompactionJob::step(uint64_t budget_bytes, bool* done) {
  *done = false;
  if (rep_->writer == nullptr) {
    record_trivial_move(*rep_->c, &rep_->edit, &rep_->out);
    *done = true;
    return Status::OK();
  }
  SKV_RETURN_IF_ERROR(rep_->writer->step(budget_bytes, done));
  if (*done) record_compaction(*rep_->c, rep_->out, &rep_->edit);
  return Status::OK();
}

const Compaction& CompactionJob::compaction() const { return *rep_->c; }
VersionEdit* CompactionJob::edit() { return &rep_->edit; }
const SortedRunOutput& CompactionJob::output() const { return rep_->out; }

Status write_level0_table(InternalIterator* memtable_iter, const JobContext& ctx,
                          const Version* version, FileMetaData* out,
                          std::vector<VlogFileMeta>* vlog_files) {
  *out = FileMetaData();
  VlogPolicy policy;
  if (ctx.options->enable_vlog) policy.separate_threshold = ctx.options->vlog_value_threshold;
  SortedRunOutput run;
  // The same job as a compaction's, with L0's compression.
  Options options;
  const JobContext flush_ctx = context_for_level(ctx, 0, &options);
  SKV_RETURN_IF_ERROR(write_sorted_run(memtable_iter, flush_ctx, version, 0,
                                       std::numeric_limits<uint64_t>::max(), &run, policy));
  if (!run.files.empty()) *out = std::move(run.files.front());
  if (vlog_files != nullptr) *vlog_files = std::move(run.vlog_files);
  return Status::OK();
}

}  // namespace skv
