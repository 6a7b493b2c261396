#include "native/migrate/tree_sink.h"

#include <utility>

namespace skv::migration {

namespace {

// A key for an error message: printable ASCII as is, other bytes as \xNN, at most 64 bytes.
std::string printable(std::string_view key) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < key.size() && i < 64; ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (key.size() > 64) out += "...";
  return out;
}

std::string describe(const SourceRecord& r) {
  std::string out = "key \"" + printable(r.key) + "\"";
  if (!r.family.empty()) out += " of column family \"" + printable(r.family) + "\"";
  return out;
}

}  // namespace

TreeSink::TreeSink(Tree tree, const MigrateOptions& options, bool prefix_families,
                   bool check_duplicates, bool versioned, uint64_t import_time)
    : tree_(std::move(tree)),
      options_(options),
      prefix_families_(prefix_families),
      check_duplicates_(check_duplicates),
      versioned_(versioned),
      import_time_(import_time) {
  summary_.versioned = versioned;
}

void TreeSink::set_source_progress(uint64_t done, uint64_t total) {
  progress_.bytes_read = done;
  progress_.bytes_total = total;
  summary_.source_bytes = done;
}

void TreeSink::report() {
  progress_.keys = summary_.keys;
  progress_.versions = summary_.versions;
  if (options_.progress) options_.progress(progress_);
}

Status TreeSink::put(const SourceRecord& record) {
  key_.clear();
  if (prefix_families_) {
    key_.append(record.family);
    key_.push_back('\0');
  }
  key_.append(record.key);

  const bool same_key = have_last_ && key_ == last_key_ && record.family == last_family_;
  if (have_last_ && !same_key && record.family == last_family_ && key_ < last_key_) {
    return Status::corruption("migrate: the source gave " + describe(record) +
                              " out of order (after \"" + printable(last_key_) + "\")");
  }
  if (same_key && !versioned_) {
    return Status::corruption("migrate: the source gave " + describe(record) + " twice");
  }
  if (!versioned_ && record.tombstone) {
    return Status::corruption("migrate: the source gave a deletion of " + describe(record) +
                              " in a read of live values");
  }
  // A versioned read may mix records with times and records without (a RocksDB family without
  // timestamps beside one with them): those get the time of the migration, as every record of
  // an unversioned import does.
  const uint64_t timestamp = record.timestamp != 0 ? record.timestamp : import_time_;
  if (check_duplicates_ && (!have_last_ || record.family != last_family_)) {
    // A new family: what earlier families wrote is committed, and a snapshot taken now sees it
    // all and none of this family's writes.
    if (Status s = commit_batch(); !s.ok()) return s;
    auto snapshot = tree_.begin_with_mode(Mode::ReadOnly);
    if (!snapshot.ok()) return snapshot.status();
    earlier_families_.emplace(std::move(snapshot).value());
  }
  if (!same_key && check_duplicates_) {
    bool exists = false;
    if (versioned_) {
      HistoryOptions any;
      any.include_tombstones = true;
      any.limit = 1;
      auto h = earlier_families_->history(key_, any);
      if (!h.ok()) return h.status();
      exists = !h->empty();
    } else {
      auto v = earlier_families_->get(key_);
      if (!v.ok()) return v.status();
      exists = v->has_value();
    }
    if (exists) {
      return Status::invalid_argument(
          "migrate: " + describe(record) +
          " is also in an earlier column family; merging families needs distinct keys (use the "
          "prefix mapping, or migrate the families one at a time)");
    }
  }
  if (versioned_) {
    // A key's versions arrive newest first and are written oldest first, so that the newest
    // is also the last written (what a plain read answers, and the winner of equal times).
    if (!same_key) {
      if (Status s = write_versions(); !s.ok()) return s;
      pending_key_ = key_;
    }
    pending_.push_back(Version{std::string(record.value), timestamp, record.tombstone});
  } else if (Status s = write(key_, record.value, 0, false); !s.ok()) {
    return s.with_context("migrate: " + describe(record) + " cannot be written");
  }
  if (!same_key) ++summary_.keys;
  ++summary_.versions;
  if (record.tombstone) ++summary_.tombstones;
  summary_.bytes += key_.size() + record.value.size();
  last_key_ = key_;
  last_family_.assign(record.family);
  have_last_ = true;
  batch_bytes_ += key_.size() + record.value.size() + 16;
  if (batch_bytes_ >= options_.batch_bytes) return commit_batch();
  return Status::OK();
}

Status TreeSink::write(const std::string& key, std::string_view value, uint64_t timestamp,
                       bool tombstone) {
  if (!tx_) {
    auto tx = tree_.begin_with_mode(Mode::WriteOnly);
    if (!tx.ok()) return tx.status();
    tx_.emplace(std::move(tx).value());
  }
  if (!versioned_) return tx_->set(key, value);
  if (tombstone) return tx_->del_at(key, timestamp);
  return tx_->set_at(key, value, timestamp);
}

Status TreeSink::write_versions() {
  for (size_t i = pending_.size(); i-- > 0;) {
    // A transaction holds one write per key: each older version goes in a batch of its own.
    if (i + 1 < pending_.size()) {
      if (Status s = commit_batch(); !s.ok()) return s;
    }
    const Version& v = pending_[i];
    if (Status s = write(pending_key_, v.value, v.timestamp, v.tombstone); !s.ok()) {
      return s.with_context("migrate: key \"" + printable(pending_key_) + "\" cannot be written");
    }
  }
  pending_.clear();
  return Status::OK();
}

Status TreeSink::commit_batch() {
  if (!tx_) return Status::OK();
  Transaction tx = std::move(*tx_);
  tx_.reset();
  batch_bytes_ = 0;
  Status s = tx.commit().wait();
  if (!s.ok()) return s;
  report();
  return Status::OK();
}

Status TreeSink::finish() {
  Status s = write_versions();
  if (s.ok()) s = commit_batch();
  if (!s.ok()) return s;
  report();
  return Status::OK();
}

}  // namespace skv::migration
