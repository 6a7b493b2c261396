// The public Tree and TreeBuilder classes.

#include "skv/tree.h"

#include "tree/tree_impl.h"
#include "txn/transaction_impl.h"
#include "util/status_macros.h"

namespace skv {

Tree::Tree(std::shared_ptr<TreeImpl> impl) : impl_(std::move(impl)) {}
Tree::~Tree() = default;

Result<Transaction> Tree::begin() const { return begin_with_mode(Mode::ReadWrite); }

Result<Transaction> Tree::begin_with_mode(Mode mode) const {
  SKV_ASSIGN_OR_RETURN(std::unique_ptr<TransactionImpl> t, impl_->begin(mode));
  return Transaction(std::move(t));
}

Result<std::optional<std::string>> Tree::get(std::string_view key) const {
  SKV_ASSIGN_OR_RETURN(Transaction tx, begin_with_mode(Mode::ReadOnly));
  return tx.get(key);
}

Status Tree::set(std::string_view key, std::string_view value) const {
  SKV_ASSIGN_OR_RETURN(Transaction tx, begin_with_mode(Mode::WriteOnly));
  SKV_RETURN_IF_ERROR(tx.set(key, value));
  return impl_->await(tx.commit());
}

Status Tree::del(std::string_view key) const {
  SKV_ASSIGN_OR_RETURN(Transaction tx, begin_with_mode(Mode::WriteOnly));
  SKV_RETURN_IF_ERROR(tx.del(key));
  return impl_->await(tx.commit());
}

Future<Status> Tree::flush() const { return impl_->flush(); }
Status Tree::compact_all() const { return impl_->compact_all(); }
Status Tree::collect_vlog_garbage() const { return impl_->collect_vlog_garbage(); }
Status Tree::rewrite_with_active_key() const { return impl_->rewrite_with_active_key(); }
Status Tree::checkpoint(const std::string& path) const { return impl_->checkpoint(path); }
Result<VerifyReport> Tree::verify(const VerifyOptions& options) const {
  return impl_->verify(options);
}
TreeStats Tree::stats() const { return impl_->stats(); }
const Options& Tree::options() const { return impl_->options(); }
Versioning Tree::versioning() const { return impl_->versioning(); }
Status Tree::close() const { return impl_->close(); }

TreeBuilder& TreeBuilder::with_path(std::string path) {
  options_.path = std::move(path);
  return *this;
}
TreeBuilder& TreeBuilder::with_platform(std::shared_ptr<Platform> platform) {
  options_.platform = std::move(platform);
  return *this;
}
TreeBuilder& TreeBuilder::with_create_if_missing(bool create) {
  options_.create_if_missing = create;
  return *this;
}
TreeBuilder& TreeBuilder::with_read_only(bool read_only) {
  options_.read_only = read_only;
  return *this;
}
TreeBuilder& TreeBuilder::with_file_mode(uint32_t mode) {
  options_.file_mode = mode;
  return *this;
}
TreeBuilder& TreeBuilder::with_memtable_size(size_t bytes) {
  options_.memtable_size = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_max_immutable_memtables(int count) {
  options_.max_immutable_memtables = count;
  return *this;
}
TreeBuilder& TreeBuilder::with_block_size(size_t bytes) {
  options_.block_size = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_block_cache_capacity(size_t bytes) {
  options_.block_cache_capacity = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_compression(Compression compression) {
  options_.compression = compression;
  return *this;
}
TreeBuilder& TreeBuilder::with_flush_compression(Compression compression) {
  options_.flush_compression = compression;
  return *this;
}
TreeBuilder& TreeBuilder::with_compression_start_level(int level) {
  options_.compression_start_level = level;
  return *this;
}
TreeBuilder& TreeBuilder::with_bloom_bits_per_key(int bits) {
  options_.bloom_bits_per_key = bits;
  return *this;
}
TreeBuilder& TreeBuilder::with_level_count(int levels) {
  options_.level_count = levels;
  return *this;
}
TreeBuilder& TreeBuilder::with_level_base_bytes(uint64_t bytes) {
  options_.level_base_bytes = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_level_multiplier(int multiplier) {
  options_.level_multiplier = multiplier;
  return *this;
}
TreeBuilder& TreeBuilder::with_compaction_step_bytes(uint64_t bytes) {
  options_.compaction_step_bytes = bytes;
  return *this;
}

TreeBuilder& TreeBuilder::with_target_file_size(uint64_t bytes) {
  options_.target_file_size = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_l0_compaction_trigger(int files) {
  options_.l0_compaction_trigger = files;
  return *this;
}
TreeBuilder& TreeBuilder::with_default_durability(Durability durability) {
  options_.default_durability = durability;
  return *this;
}

TreeBuilder& TreeBuilder::with_versioning(bool enabled, uint64_t retention_ns) {
  options_.versioning = Versioning{enabled, retention_ns};
  return *this;
}

TreeBuilder& TreeBuilder::with_encryption(std::shared_ptr<KeyManager> keys,
                                          CipherPreference /*preference*/) {
  options_.key_manager = std::move(keys);
  options_.cipher.reset();
  return *this;
}

TreeBuilder& TreeBuilder::with_encryption(std::shared_ptr<KeyManager> keys, CipherSuite cipher) {
  options_.key_manager = std::move(keys);
  options_.cipher = cipher;
  return *this;
}

TreeBuilder& TreeBuilder::with_commit_pipeline(CommitPipeline pipeline) {
  options_.commit_pipeline = pipeline;
  return *this;
}
TreeBuilder& TreeBuilder::with_enable_vlog(bool enable) {
  options_.enable_vlog = enable;
  return *this;
}
TreeBuilder& TreeBuilder::with_vlog_value_threshold(size_t bytes) {
  options_.vlog_value_threshold = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_vlog_max_file_size(uint64_t bytes) {
  options_.vlog_max_file_size = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_vlog_gc_ratio(double ratio) {
  options_.vlog_gc_ratio = ratio;
  return *this;
}
TreeBuilder& TreeBuilder::with_vlog_cache_capacity(size_t bytes) {
  options_.vlog_cache_capacity = bytes;
  return *this;
}
TreeBuilder& TreeBuilder::with_options(Options options) {
  options_ = std::move(options);
  return *this;
}

Result<Tree> TreeBuilder::open(const Options& options) {
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<TreeImpl> owner, TreeImpl::open(options));
  // Handles share one pointer whose deleter closes the tree when the last handle goes; the
  // implementation itself lives on while transactions or iterators still hold it.
  TreeImpl* raw = owner.get();
  std::shared_ptr<TreeImpl> handle(raw, [owner](TreeImpl* p) { (void)p->close(); });
  return Tree(std::move(handle));
}

}  // namespace skv
