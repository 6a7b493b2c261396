// TreeImpl: the read path (point reads, iterators) and the published ReadView.

#include "iterator/db_iterator.h"
#include "iterator/merging_iterator.h"
#include "iterator/version_iterators.h"
#include "tree/tree_impl.h"
#include "util/status_macros.h"

namespace skv {

std::shared_ptr<const ReadView> TreeImpl::current_view() const { return view_.load(); }

void TreeImpl::install_view() {
  auto v = std::make_shared<ReadView>();
  v->mem = mem_;
  v->imms.reserve(imms_.size());
  for (auto it = imms_.rbegin(); it != imms_.rend(); ++it) v->imms.push_back(it->mem);
  v->version = versions_->current();
  v->vlog_cache = vlog_cache_;
  for (int level = 0; level < v->version->level_count(); ++level) {
    for (const auto& f : v->version->files(level)) {
      v->version_max_seq = std::max(v->version_max_seq, f->largest_seq);
    }
  }
  view_.store(std::move(v));
}

Future<Result<std::optional<std::string>>> TreeImpl::get_async(std::string key,
                                                               SequenceNumber snapshot) {
  using Answer = Result<std::optional<std::string>>;
  Promise<Answer> done;
  Future<Answer> f = done.future();
  if (Status s = check_open(); !s.ok()) {
    done.set(s);
    return f;
  }
  snapshots_.retain(snapshot);
  std::weak_ptr<TreeImpl> weak = weak_from_this();
  platform_->executor().schedule([weak, key = std::move(key), snapshot, done]() {
    std::shared_ptr<TreeImpl> self = weak.lock();
    if (self == nullptr) {
      done.set(Status::closed("tree closed before the read ran"));
      return;
    }
    std::string value;
    bool found = false;
    Status s = self->get(key, snapshot, &value, &found);
    self->snapshots_.release(snapshot);
    if (!s.ok()) {
      done.set(s);
    } else if (found) {
      done.set(std::optional<std::string>(std::move(value)));
    } else {
      done.set(std::optional<std::string>());
    }
  });
  return f;
}

Status TreeImpl::get(std::string_view key, SequenceNumber snapshot, std::string* value,
                     bool* found) {
  *found = false;
  SKV_RETURN_IF_ERROR(check_open());
  std::shared_ptr<const ReadView> v = current_view();
  if (v == nullptr) return Status::closed("tree is closed");
  MemTable::GetResult r;
  bool hit = v->mem->get(key, snapshot, &r);
  for (size_t i = 0; !hit && i < v->imms.size(); ++i) hit = v->imms[i]->get(key, snapshot, &r);
  if (hit) {
    if (r.kind == ValueKind::Value) {
      value->assign(r.value);
      *found = true;
    }
    return Status();
  }
  Table::GetResult tr;
  bool in_tables = false;
  SKV_RETURN_IF_ERROR(v->version->get(key, snapshot, &tr, &in_tables));
  if (!in_tables || tr.kind == ValueKind::Delete) return Status();
  if (tr.kind == ValueKind::ValuePointer) {
    SKV_RETURN_IF_ERROR(v->vlog_cache->read(key, tr.value, value, true));
  } else {
    *value = std::move(tr.value);
  }
  *found = true;
  return Status();
}

namespace {

// Keeps the memtables and version of a ReadView alive for as long as the iterator lives (the
// version keeps the table and block caches alive, the DBIterator's resolver the value log
// cache), and stops at the tree's close(): from then on
// every move leaves it invalid with status Closed, and nothing of the closed tree is read.
class PinnedIterator final : public UserIterator {
 public:
  PinnedIterator(std::shared_ptr<const ReadView> view, std::unique_ptr<UserIterator> it,
                 std::shared_ptr<const std::atomic<bool>> tree_closed)
      : view_(std::move(view)), it_(std::move(it)), tree_closed_(std::move(tree_closed)) {}
  bool valid() const override { return !stopped_ && it_->valid(); }
  void seek_first() override {
    if (open()) it_->seek_first();
  }
  void seek_last() override {
    if (open()) it_->seek_last();
  }
  void seek(std::string_view k) override {
    if (open()) it_->seek(k);
  }
  void next() override {
    if (open()) it_->next();
  }
  void prev() override {
    if (open()) it_->prev();
  }
  std::string_view key() const override { return it_->key(); }
  std::string_view value() const override { return it_->value(); }
  uint64_t timestamp() const override { return it_->timestamp(); }
  bool is_delete() const override { return it_->is_delete(); }
  Status status() const override {
    if (stopped_) return Status::closed("the tree was closed while the iterator was open");
    return it_->status();
  }

 private:
  bool open() {
    if (!stopped_ && tree_closed_->load(std::memory_order_acquire)) stopped_ = true;
    return !stopped_;
  }

  std::shared_ptr<const ReadView> view_;
  std::unique_ptr<UserIterator> it_;
  const std::shared_ptr<const std::atomic<bool>> tree_closed_;
  bool stopped_ = false;
};

}  // namespace

std::unique_ptr<InternalIterator> TreeImpl::merged_input(
    const ReadView& v, bool fill_cache, std::optional<std::string_view> only_key) const {
  std::vector<std::unique_ptr<InternalIterator>> children;
  children.reserve(2 + v.imms.size() + static_cast<size_t>(v.version->level_count()));
  auto add_memtable = [&](const MemTable& m) {
    if (!only_key || m.may_contain(*only_key)) children.push_back(m.new_iterator());
  };
  add_memtable(*v.mem);
  for (const auto& imm : v.imms) add_memtable(*imm);
  TableReadOptions read_options;
  read_options.fill_cache = fill_cache;
  read_options.scan_pool = !fill_cache;  // concurrent counts share what one of them decoded
  read_options.readahead = !fill_cache && !only_key;  // a sweep, not a point read
  if (only_key) {
    Status s = v.version->add_point_iterators(*only_key, read_options, &children);
    if (!s.ok()) return new_empty_iterator(std::move(s));
  } else {
    v.version->add_iterators(read_options, &children);
  }
  return new_merging_iterator(std::move(children));
}

namespace {

// The one user key in [lower, upper) when that range holds exactly one (upper is lower followed
// by a zero byte, the next key in byte order), so its reader may use the filters.
std::optional<std::string_view> single_key(const std::string& lower, const std::string& upper) {
  if (lower.empty() || upper.size() != lower.size() + 1 || upper.back() != '\0' ||
      upper.compare(0, lower.size(), lower) != 0) {
    return std::nullopt;
  }
  return std::string_view(lower);
}

}  // namespace

std::unique_ptr<UserIterator> TreeImpl::pin(std::shared_ptr<const ReadView> v,
                                            std::unique_ptr<UserIterator> it) const {
  return std::make_unique<PinnedIterator>(std::move(v), std::move(it), closed_);
}

Result<std::unique_ptr<UserIterator>> TreeImpl::new_iterator(SequenceNumber snapshot,
                                                             std::string lower, std::string upper,
                                                             bool keys_only, bool fill_cache) {
  SKV_RETURN_IF_ERROR(check_open());
  std::shared_ptr<const ReadView> v = current_view();
  if (v == nullptr) return Status::closed("tree is closed");  // close() ran since the check
  // A keys-only iterator never reads the value log: it gets no resolver at all.
  std::shared_ptr<ValueResolver> resolver =
      keys_only ? nullptr : v->vlog_cache->resolver(fill_cache);
  auto it = new_db_iterator(merged_input(*v, fill_cache), snapshot, std::move(lower),
                            std::move(upper), keys_only, std::move(resolver));
  return pin(std::move(v), std::move(it));
}

Result<std::unique_ptr<UserIterator>> TreeImpl::new_time_iterator(SequenceNumber snapshot,
                                                                  std::string lower,
                                                                  std::string upper,
                                                                  const TimeQuery& query) {
  SKV_RETURN_IF_ERROR(check_open());
  std::shared_ptr<const ReadView> v = current_view();
  if (v == nullptr) return Status::closed("tree is closed");
  std::unique_ptr<InternalIterator> input = merged_input(*v, true, single_key(lower, upper));
  const bool keys_only = query.kind == TimeQuery::Kind::AsOf && query.keys_only;
  std::shared_ptr<ValueResolver> resolver = keys_only ? nullptr : v->vlog_cache->resolver(true);
  std::unique_ptr<UserIterator> it =
      query.kind == TimeQuery::Kind::AsOf
          ? new_as_of_iterator(std::move(input), snapshot, std::move(lower), std::move(upper),
                               query.timestamp, keys_only, std::move(resolver))
          : new_history_iterator(std::move(input), snapshot, std::move(lower), std::move(upper),
                                 query.include_tombstones, std::move(resolver));
  return pin(std::move(v), std::move(it));
}

}  // namespace skv
