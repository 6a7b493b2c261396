// TreeImpl: opening (creating or recovering), closing, statistics.
//
// Recovery: the manifest gives the tables and the oldest WAL segment still needed (log_number).
// Every segment from there on is replayed into its own memtable — a segment holds exactly the
// writes of one memtable — and those memtables are queued for flushing. Only the newest segment
// may end in a torn record (the tail of an unsynced write, cut by the crash): it is dropped and the
// file truncated. A torn record in an older segment, or a damaged record anywhere, is corruption
// naming the file and offset. New writes go to a fresh segment.

#include <algorithm>
#include <cstdio>

#include "crypto/sealed_pointer.h"
#include "format/file_names.h"
#include "memtable/batch_insert.h"
#include "memtable/recycled_blocks.h"
#include "tree/tree_impl.h"
#include "txn/transaction_impl.h"
#include "util/status_macros.h"
#include "wal/log_reader.h"
#include "wal/write_batch.h"

namespace skv {

namespace {

Status check_options(const Options& o) {
  if (o.path.empty()) return Status::invalid_argument("options: path is empty");
  if ((o.file_mode & ~0777u) != 0 || (o.file_mode & 0600u) != 0600u) {
    char mode[16];
    std::snprintf(mode, sizeof(mode), "%o", o.file_mode);
    return Status::invalid_argument(std::string("options: file_mode 0") + mode +
                                    " must include 0600 and nothing beyond 0777");
  }
  if (o.memtable_size < 4 * 1024) {
    return Status::invalid_argument("options: memtable_size must be at least 4 KiB");
  }
  if (o.block_size < 256 || o.block_size > (64u << 20)) {
    return Status::invalid_argument("options: block_size must be between 256 B and 64 MiB");
  }
  if (o.block_restart_interval < 1) {
    return Status::invalid_argument("options: block_restart_interval must be at least 1");
  }
  if (o.bloom_bits_per_key < 0 || o.bloom_bits_per_key > 64) {
    return Status::invalid_argument("options: bloom_bits_per_key must be between 0 and 64");
  }
  if (o.level_count < 2 || o.level_count > 16) {
    return Status::invalid_argument("options: level_count must be between 2 and 16");
  }
  if (o.l0_compaction_trigger < 1 || o.l0_stop_writes_trigger <= o.l0_compaction_trigger) {
    return Status::invalid_argument(
        "options: l0_compaction_trigger must be >= 1 and below l0_stop_writes_trigger");
  }
  if (o.level_multiplier < 2) {
    return Status::invalid_argument("options: level_multiplier must be at least 2");
  }
  if (o.level_base_bytes < (1u << 16) || o.target_file_size < (1u << 16)) {
    return Status::invalid_argument(
        "options: level_base_bytes and target_file_size must be at least 64 KiB");
  }
  if (o.max_immutable_memtables < 1) {
    return Status::invalid_argument("options: max_immutable_memtables must be at least 1");
  }
  for (Compression c : {o.compression, o.flush_compression}) {
    if (c != Compression::None && c != Compression::Zstd) {
      return Status::invalid_argument(
          "options: compression and flush_compression must be None or Zstd, not " +
          std::to_string(static_cast<int>(c)));
    }
  }
  if (o.compression_start_level < 1 || o.compression_start_level > o.level_count) {
    return Status::invalid_argument(
        "options: compression_start_level must be between 1 and level_count (" +
        std::to_string(o.level_count) + "), not " + std::to_string(o.compression_start_level));
  }
  if (o.zstd_level < 1 || o.zstd_level > 19) {
    return Status::invalid_argument("options: zstd_level must be between 1 and 19");
  }
  if (o.vlog_value_threshold < 1 || o.vlog_value_threshold > kMaxValueSize) {
    return Status::invalid_argument(
        "options: vlog_value_threshold must be between 1 byte and 64 MiB");
  }
  if (o.vlog_max_file_size < 4096) {
    return Status::invalid_argument("options: vlog_max_file_size must be at least 4 KiB");
  }
  // Written so that NaN fails too.
  if (!(o.vlog_gc_ratio > 0 && o.vlog_gc_ratio <= 1)) {
    return Status::invalid_argument("options: vlog_gc_ratio must be above 0 and at most 1");
  }
  if (o.key_manager != nullptr && !encryption_compiled()) {
    return Status::invalid_argument(
        "options: a key manager was given, but this build of skv has no encryption "
        "(SKV_ENCRYPTION=OFF)");
  }
  if (o.key_manager == nullptr && o.cipher) {
    return Status::invalid_argument("options: a cipher was given without a key manager");
  }
  if (o.cipher && !cipher_available(*o.cipher)) {
    return Status::not_supported(std::string("options: cipher ") + cipher_name(*o.cipher) +
                                 " cannot run in this build or on this CPU");
  }
  return Status();
}

}  // namespace

TreeImpl::TreeImpl(const Options& options)
    : options_(options),
      pipeline_(std::make_unique<commit::CommitPipeline>(
          this, options.commit_pipeline == CommitPipeline::Deferred)) {}

TreeImpl::~TreeImpl() { (void)close(); }

Result<std::shared_ptr<TreeImpl>> TreeImpl::open(const Options& options) {
  SKV_RETURN_IF_ERROR(check_options(options));
  std::shared_ptr<TreeImpl> t(new TreeImpl(options));
  Status s = t->open_impl();
  if (!s.ok()) {
    t->closed_->store(true);
    return s;
  }
  return t;
}

Status TreeImpl::open_impl() {
  platform_ = options_.platform;
  if (!platform_) {
    return Status::invalid_argument(
        "options: no platform: this program links no default platform (skv::native); give one "
        "with TreeBuilder::with_platform()");
  }
  memory_blocks_ = platform_->memory_blocks();
  if (!memory_blocks_) {
    return Status::invalid_argument("options: the platform's memory_blocks() returned no source");
  }
  memtable_blocks_ = std::make_shared<RecycledBlocks>(memory_blocks_, options_.memtable_size);
  StorageOptions storage_options;
  storage_options.create_if_missing = options_.create_if_missing;
  storage_options.marker = current_file_name();
  storage_options.file_mode = options_.file_mode;
  storage_options.read_only = options_.read_only;
  SKV_ASSIGN_OR_RETURN(storage_, platform_->open_storage(options_.path, storage_options));
  SKV_RETURN_IF_ERROR(setup_encryption());
  // The cache's blocks live in chunks of the platform's memory blocks (huge pages natively)
  // when it has them: at most a sixteenth more than the cache holds, for the blocks readers
  // still hold after eviction and each size class's partly carved chunk. Past that the heap
  // serves.
  const size_t cache_bytes = options_.block_cache_capacity;
  block_cache_ = std::make_shared<BlockCache>(
      cache_bytes, BlockBufferPool::create(memory_blocks_, cache_bytes + cache_bytes / 16));
  table_cache_ = std::make_shared<TableCache>(storage_.get(), block_cache_, 1000, keyring_.get());
  vlog_cache_ = std::make_shared<VlogCache>(storage_.get(), options_.vlog_cache_capacity,
                                            kMaxOpenVlogs, keyring_.get());
  versions_ = std::make_unique<VersionSet>(storage_.get(), options_, table_cache_);
  versions_->set_keyring(keyring_.get());

  SKV_ASSIGN_OR_RETURN(std::vector<std::string> log_names, storage_->logs().list());
  SKV_ASSIGN_OR_RETURN(std::vector<std::string> object_names, storage_->objects().list());
  std::vector<uint64_t> wals, tables, vlogs;
  uint64_t max_number = 0;
  for (const auto& name : log_names) {
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(name, &type, &number)) continue;
    if (type == FileType::Wal) wals.push_back(number);
    if (type == FileType::ValueLog) vlogs.push_back(number);
    max_number = std::max(max_number, number);
  }
  for (const auto& name : object_names) {
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(name, &type, &number)) continue;
    if (type == FileType::Table) tables.push_back(number);
    max_number = std::max(max_number, number);
  }

  auto current = storage_->read_pointer(current_file_name());
  if (!current.ok()) {
    if (!current.status().is_not_found()) return current.status();
    if (!options_.create_if_missing || options_.read_only) {
      // The platform checked for CURRENT before it took the lock; it went away since.
      return Status::not_found(storage_->location() + ": not an skv database (it has no " +
                               current_file_name() + ")");
    }
    if (!wals.empty() || !tables.empty() || !vlogs.empty()) {
      return Status::corruption(
          storage_->location() +
          ": CURRENT is missing but the database holds WAL, table or value log files");
    }
    SKV_RETURN_IF_ERROR(versions_->create_new());
  } else {
    SKV_RETURN_IF_ERROR(versions_->recover());
    SKV_RETURN_IF_ERROR(check_versioning());
    SKV_RETURN_IF_ERROR(check_live_file_keys());
  }
  versioning_ = versions_->versioning();
  if (options_.versioning && versioning_.enabled) {
    versioning_.retention_ns = options_.versioning->retention_ns;  // recorded below
  }
  versions_->mark_file_number_used(max_number);

  // Tables and value logs no version names are outputs of a flush or compaction a crash
  // interrupted. Only names of our own making are listed, and the database is locked. A
  // read-only open leaves them.
  if (!options_.read_only) {
    std::set<uint64_t> live = versions_->live_files();
    for (uint64_t n : tables) {
      if (live.count(n) == 0) obsolete_tables_.insert(n);
    }
    std::set<uint64_t> live_vlogs = versions_->live_vlog_files();
    for (uint64_t n : vlogs) {
      if (live_vlogs.count(n) == 0) obsolete_vlogs_.insert(n);
    }
  }

  std::sort(wals.begin(), wals.end());
  std::vector<uint64_t> replay;
  for (uint64_t n : wals) {
    if (n >= versions_->log_number()) replay.push_back(n);
  }
  SKV_RETURN_IF_ERROR(recover_wal(replay));
  if (options_.read_only) {
    // Reads see the replayed memtables (queued, never flushed) and an empty active one.
    mem_ = new_memtable();
    std::lock_guard<std::mutex> lock(mu_);
    install_view();
    return Status();
  }
  SKV_RETURN_IF_ERROR(new_wal_segment());

  std::lock_guard<std::mutex> lock(mu_);
  const bool new_retention = versions_->versioning() != versioning_;
  if (imms_.empty() || new_retention) {
    // Nothing to flush: record that no older segment is needed any more. A new retention is
    // recorded now, so it holds from this open on.
    VersionEdit edit;
    if (imms_.empty()) edit.set_log_number(wal_number_);
    if (new_retention) edit.set_versioning(versioning_);
    SKV_RETURN_IF_ERROR(versions_->log_and_apply(&edit));
  }
  install_view();
  delete_obsolete_files();
  maybe_schedule_work();
  return Status();
}

Status TreeImpl::setup_encryption() {
  const std::string label = storage_->location() + "/" + current_file_name();
  auto current = storage_->read_pointer(current_file_name());
  if (!current.ok()) {
    if (!current.status().is_not_found()) return current.status();
    // A new database (open_impl refuses a missing CURRENT in any other case).
    if (options_.key_manager == nullptr) return Status();
    SKV_RETURN_IF_ERROR(crypto::init());
    crypto::DatabaseId id;
    crypto::random_bytes(id.data(), id.size());
    const CipherSuite suite = options_.cipher.value_or(CipherSuite::XChaCha20Poly1305);
    keyring_ = std::make_shared<crypto::Keyring>(options_.key_manager, suite, id);
    return keyring_->prepare({});
  }
  std::string_view first_line;
  std::optional<crypto::PointerSeal> seal;
  SKV_RETURN_IF_ERROR(crypto::split_pointer(*current, label, &first_line, &seal));
  if (!seal) {
    if (options_.key_manager == nullptr) return Status();
    return Status::encryption(EncryptionError::NotEncrypted,
                              storage_->location() +
                                  ": the database is not encrypted (encryption cannot be added "
                                  "to a database that exists); open it without a key manager");
  }
  if (options_.key_manager == nullptr) {
    return Status::encryption(EncryptionError::NotConfigured,
                              storage_->location() + ": the database is encrypted (" +
                                  cipher_name(seal->suite) + ") and no key manager was given");
  }
  if (options_.cipher && *options_.cipher != seal->suite) {
    return Status::invalid_argument(storage_->location() + ": the database is encrypted with " +
                                    cipher_name(seal->suite) + ", not " +
                                    cipher_name(*options_.cipher));
  }
  if (!cipher_available(seal->suite)) {
    return Status::not_supported(storage_->location() + ": the database is encrypted with " +
                                 cipher_name(seal->suite) +
                                 ", which this build or this CPU cannot run");
  }
  keyring_ = std::make_shared<crypto::Keyring>(options_.key_manager, seal->suite, seal->db_id);
  return keyring_->prepare({seal->key_id});
}

Status TreeImpl::check_live_file_keys() {
  if (keyring_ == nullptr) return Status();
  // Every live table and value log names its key in its header: read them all now, so a key the
  // manager lacks or a wrong key is refused by name before the open writes anything.
  struct LiveFile {
    std::string name;
    FileKind kind;
    uint64_t number;
  };
  std::vector<LiveFile> files;
  for (uint64_t n : versions_->live_files())
    files.push_back({table_file_name(n), FileKind::Table, n});
  for (uint64_t n : versions_->live_vlog_files()) {
    files.push_back({vlog_file_name(n), FileKind::ValueLog, n});
  }
  std::vector<FileHeader> headers;
  for (const LiveFile& f : files) {
    SKV_ASSIGN_OR_RETURN(FileHeader h, read_file_header(f.name, f.kind));
    if (h.file_number != f.number) {
      // Two files swapped or renamed: their sealed units would fail anyway; say so by name now.
      return Status::corruption(storage_->location() + "/" + f.name +
                                ": header names file number " + std::to_string(h.file_number));
    }
    headers.push_back(h);
  }
  std::vector<uint32_t> ids;
  for (const FileHeader& h : headers) ids.push_back(h.key_id);
  SKV_RETURN_IF_ERROR(keyring_->keys().prepare(ids));
  for (size_t i = 0; i < headers.size(); ++i) {
    SKV_RETURN_IF_ERROR(
        keyring_->for_existing_file(headers[i], storage_->location() + "/" + files[i].name)
            .status());
  }
  return Status();
}

Result<FileHeader> TreeImpl::read_file_header(const std::string& name, FileKind kind) {
  const std::string label = storage_->location() + "/" + name;
  char scratch[kFileHeaderSize];
  std::string_view got;
  if (kind == FileKind::Table) {
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> r, storage_->objects().open(name));
    SKV_RETURN_IF_ERROR(r->read_at(0, kFileHeaderSize, scratch, &got));
  } else {
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> f, storage_->logs().open(name));
    Status s = f->read_at(0, kFileHeaderSize, scratch, &got);
    (void)f->close();
    SKV_RETURN_IF_ERROR(s);
  }
  return decode_file_header(got, kind, label);
}

Result<std::shared_ptr<const crypto::FileCipher>> TreeImpl::new_file_cipher(
    FileKind kind, uint64_t number, const std::string& name) {
  if (keyring_ == nullptr) return std::shared_ptr<const crypto::FileCipher>();
  return keyring_->for_new_file(kind, number, storage_->location() + "/" + name);
}

Status TreeImpl::check_versioning() {
  const Versioning& stored = versions_->versioning();
  if (!options_.versioning) return Status();
  if (options_.versioning->enabled != stored.enabled) {
    return Status::invalid_argument(
        storage_->location() + (stored.enabled ? ": the database is versioned; open it with "
                                                 "with_versioning(true, retention) or without "
                                                 "with_versioning()"
                                               : ": the database is not versioned, and versioning "
                                                 "cannot be turned on for a database that exists"));
  }
  return Status();
}

Status TreeImpl::recover_wal(std::vector<uint64_t> wal_numbers) {
  SequenceNumber last = versions_->last_sequence();
  for (size_t i = 0; i < wal_numbers.size(); ++i) {
    std::shared_ptr<MemTable> mem;
    SKV_RETURN_IF_ERROR(replay_segment(wal_numbers[i], i + 1 == wal_numbers.size(), &mem));
    if (mem->empty()) continue;
    last = std::max(last, mem->largest_sequence());
    versions_->set_last_timestamp(mem->largest_commit_timestamp());
    imms_.push_back(ImmEntry{std::move(mem), wal_numbers[i], {}});
  }
  versions_->set_last_sequence(last);
  pipeline_->start_after(last, versions_->last_timestamp());
  return Status();
}

Status TreeImpl::replay_segment(uint64_t number, bool last, std::shared_ptr<MemTable>* out) {
  const std::string name = wal_file_name(number);
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, storage_->logs().open(name));
  auto mem = new_memtable();
  log::Reader reader(file.get(), FileKind::Wal, keyring_.get());
  FileHeader header;
  header.file_number = number;
  SKV_RETURN_IF_ERROR(reader.read_header(&header));
  const std::string label = storage_->location() + "/" + name;
  if (header.file_number != number) {
    return Status::corruption(label + ": header names file number " +
                              std::to_string(header.file_number));
  }
  std::string record;
  while (true) {
    uint64_t offset = 0;
    auto more = reader.read_record(&record, &offset);
    if (!more.ok()) return more.status();
    if (!*more) break;
    Status s = WriteBatch::check(record);
    if (!s.ok()) {
      return Status::corruption(storage_->location() + "/" + name + ": bad write batch at offset " +
                                std::to_string(offset) + ": " + s.message());
    }
    insert_batch(record, mem.get());  // as the commit pipeline applied it
  }
  // A segment that never got a byte (created, then the tree closed or crashed before the first
  // commit) holds no records; only a cut inside real bytes of an older segment is damage.
  if (reader.torn_tail() && file->size() > 0) {
    if (!last) {
      return Status::corruption(
          storage_->location() + "/" + name + ": record cut short at offset " +
          std::to_string(reader.valid_end()) + " in a WAL segment that is not the newest");
    }
    // A read-only open leaves the tail: the replay stopped before it, and the next open that may
    // write cuts it.
    if (!options_.read_only) SKV_RETURN_IF_ERROR(file->truncate(reader.valid_end()));
  }
  if (options_.read_only) {
    (void)file->close();
    *out = std::move(mem);
    return Status();
  }
  // What was replayed becomes durable before anything new depends on it: the bytes may never
  // have been synced (a close whose sync failed, a killed process), and the cut of a torn tail
  // must hold, or a later crash could bring back a tail in a segment that is no longer the newest.
  SKV_RETURN_IF_ERROR(file->sync());
  (void)file->close();
  *out = std::move(mem);
  return Status();
}

Status TreeImpl::new_wal_segment() {
  SKV_ASSIGN_OR_RETURN(const uint64_t number, versions_->new_file_number());
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file,
                       storage_->logs().create(wal_file_name(number)));
  SKV_RETURN_IF_ERROR(storage_->sync_dir());
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<const crypto::FileCipher> cipher,
                       new_file_cipher(FileKind::Wal, number, wal_file_name(number)));
  FileHeader h;
  h.kind = FileKind::Wal;
  h.file_number = number;
  wal_ = std::make_unique<log::Writer>(std::move(file), h, std::move(cipher));
  wal_->reserve_ahead(kWalRoomStep);
  wal_number_ = number;
  mem_ = new_memtable();
  return Status();
}

void TreeImpl::delete_obsolete_files() {
  std::set<uint64_t> live = versions_->live_files();
  for (auto it = obsolete_tables_.begin(); it != obsolete_tables_.end();) {
    if (live.count(*it) != 0) {
      ++it;
      continue;
    }
    table_cache_->evict(*it);
    Status s = storage_->objects().remove(table_file_name(*it));
    if (s.ok() || s.is_not_found()) {
      it = obsolete_tables_.erase(it);
    } else {
      ++it;  // retried after the next flush or compaction
    }
  }
  std::set<uint64_t> live_vlogs = versions_->live_vlog_files();
  for (auto it = obsolete_vlogs_.begin(); it != obsolete_vlogs_.end();) {
    if (live_vlogs.count(*it) != 0) {
      ++it;  // an iterator still reads an older version that has it
      continue;
    }
    vlog_cache_->evict(*it);
    Status s = storage_->logs().remove(vlog_file_name(*it));
    if (s.ok() || s.is_not_found()) {
      it = obsolete_vlogs_.erase(it);
    } else {
      ++it;
    }
  }
  auto logs = storage_->logs().list();
  if (!logs.ok()) return;
  for (const auto& name : *logs) {
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(name, &type, &number)) continue;
    // Old WAL segments, and manifests CURRENT does not name (replaced ones, or a new one whose
    // CURRENT update failed). Rollovers happen under mu_, like this call.
    const bool old_wal = type == FileType::Wal && number < versions_->log_number();
    const bool stray_manifest =
        type == FileType::Manifest && number != versions_->manifest_file_number();
    if (old_wal || stray_manifest) (void)storage_->logs().remove(name);
  }
}

Status TreeImpl::check_open() const {
  if (closed_->load(std::memory_order_acquire)) return Status::closed("tree is closed");
  return Status();
}

Status TreeImpl::check_writable(const char* what) const {
  if (!options_.read_only) return Status();
  return Status::read_only(std::string(what) + ": " + options_.path + " is open read-only");
}

Result<std::unique_ptr<TransactionImpl>> TreeImpl::begin(Mode mode) {
  SKV_RETURN_IF_ERROR(check_open());
  if (options_.read_only) {
    // begin() reads; its writes fail with ReadOnly in the transaction. A blind writer has
    // nothing to do here.
    if (mode == Mode::WriteOnly) SKV_RETURN_IF_ERROR(check_writable("a write-only transaction"));
    mode = Mode::ReadOnly;
  }
  SequenceNumber snap = snapshots_.acquire(pipeline_->visible());
  return std::make_unique<TransactionImpl>(shared_from_this(), mode, snap,
                                           options_.default_durability);
}

TreeStats TreeImpl::stats() {
  TreeStats st;
  st.last_sequence = pipeline_->visible().load(std::memory_order_acquire);
  const commit::CommitCounters c = pipeline_->counters();
  st.commits = c.commits;
  st.commit_groups = c.groups;
  st.wal_syncs = c.syncs;
  std::lock_guard<std::mutex> lock(mu_);
  if (!versions_) return st;
  st.memtable_bytes = mem_ ? mem_->approximate_memory_usage() : 0;
  st.immutable_memtables = static_cast<int>(imms_.size());
  st.background_jobs = (flush_scheduled_ ? 1 : 0) + (compaction_scheduled_ ? 1 : 0);
  st.memtable_entries = mem_ ? mem_->num_entries() : 0;
  for (const ImmEntry& imm : imms_) st.memtable_entries += imm.mem->num_entries();
  auto v = versions_->current();
  st.level_count = std::min(v->level_count(), 16);
  for (int l = 0; l < st.level_count; ++l) {
    st.files_per_level[l] = v->num_files(l);
    st.bytes_per_level[l] = v->level_bytes(l);
    for (const auto& f : v->files(l)) st.table_entries += f->num_entries;
  }
  st.flushes = flushes_;
  st.compactions = compactions_;
  st.compaction_steps = compaction_steps_;
  st.stalls = stalls_;
  st.block_cache_usage = block_cache_ ? block_cache_->usage() : 0;
  st.block_cache_scan_usage = block_cache_ ? block_cache_->low_usage() : 0;
  st.block_cache_pool_bytes =
      block_cache_ && block_cache_->buffers() ? block_cache_->buffers()->chunk_bytes() : 0;
  for (const auto& u : v->vlog_files()) {
    ++st.vlog_files;
    st.vlog_bytes += u.meta.file_size;
    st.vlog_garbage_bytes += u.garbage_bytes();
  }
  st.vlog_gc_runs = vlog_gc_runs_;
  st.vlog_gc_bytes_moved = vlog_gc_bytes_moved_;
  st.vlog_cache_usage = vlog_cache_ ? vlog_cache_->cache_usage() : 0;
  return st;
}

Status TreeImpl::close() {
  if (closed_->exchange(true)) return Status();
  if (!storage_) return Status();
  // No more commits; everything queued is written (or fails) first.
  pipeline_->close();
  Status s;
  if (wal_) {
    bool failed = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      failed = wal_failed_;
      if (failed) s = bg_error_;
    }
    // After a failed write or sync the WAL's unsynced bytes are of unknown fate: syncing them now
    // could make a commit that was reported as failed durable. Close reports the failure
    // instead: commits acknowledged as Eventual before it may not have reached the disk.
    // A clean close leaves no reserved zeros behind: the segment ends at its last record.
    if (!failed) s = wal_->release_room();
    if (s.ok() && !failed) s = wal_->sync();
    Status c = wal_->close();
    if (s.ok()) s = c;
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    closing_ = true;
    wait_for_background(lock);
    bg_job_.reset();  // a compaction paused between steps: its outputs are removed
    fail_flush_waiters(lock, Status::closed("tree closed before the flush"));
  }
  wal_.reset();
  view_.store(nullptr);
  // Iterators and reads still running keep the caches and their Versions alive (shared), but
  // none may open a table once the storage goes: this waits for opens in progress.
  table_cache_->close();
  vlog_cache_->close();
  {
    std::lock_guard<std::mutex> lock(mu_);
    versions_.reset();
    table_cache_.reset();
    block_cache_.reset();
  }
  storage_.reset();  // releases the lock
  return s;
}

}  // namespace skv
