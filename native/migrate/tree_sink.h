// TreeSink: the RecordSink migrate() hands a reader, writing the records into the destination
// tree in batches of about MigrateOptions::batch_bytes, one write-only transaction each. It maps
// families to keys (FamilyMapping), writes versions with their times in a versioned tree
// (set_at / del_at) or plain values otherwise, counts keys, versions and bytes, and reports
// progress after each batch. Errors from the tree name the family and the key.
//
// Not thread-safe; used by the one thread that runs the reader.

#ifndef SKV_NATIVE_MIGRATE_TREE_SINK_H_
#define SKV_NATIVE_MIGRATE_TREE_SINK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "native/migrate/source.h"
#include "skv/migrate.h"
#include "skv/tree.h"

namespace skv::migration {

class TreeSink : public RecordSink {
 public:
  // `prefix_families`: each key becomes family ‖ 0x00 ‖ key. `check_duplicates`: a key already
  // written by an earlier family is refused (FamilyMapping::Merge with several families).
  // `versioned`: records carry times and tombstones, written with set_at/del_at; a record
  // without a time (timestamp 0) is stamped with `import_time` (nanoseconds since the epoch).
  TreeSink(Tree tree, const MigrateOptions& options, bool prefix_families, bool check_duplicates,
           bool versioned, uint64_t import_time);

  Status put(const SourceRecord& record) override;
  // Commits the last batch. REQUIRES: no put() after it.
  Status finish();

  // Bytes of the source read so far, as the reader reports them (for progress).
  void set_source_progress(uint64_t done, uint64_t total);

  const MigrateSummary& summary() const { return summary_; }

 private:
  Status commit_batch();
  // Adds one write to the batch.
  Status write(const std::string& key, std::string_view value, uint64_t timestamp, bool tombstone);
  // Writes the buffered versions of pending_key_, oldest first.
  Status write_versions();
  void report();

  Tree tree_;
  const MigrateOptions& options_;
  const bool prefix_families_;
  const bool check_duplicates_;
  const bool versioned_;
  const uint64_t import_time_;
  struct Version {
    std::string value;
    uint64_t timestamp;
    bool tombstone;
  };
  std::optional<Transaction> tx_;
  std::string pending_key_;                      // versioned: the key whose versions are buffered
  std::vector<Version> pending_;                 // ... newest first, as they arrived
  std::optional<Transaction> earlier_families_;  // a snapshot for check_duplicates
  size_t batch_bytes_ = 0;
  std::string key_;       // the destination key being built
  std::string last_key_;  // the destination key of the previous record
  std::string last_family_;
  bool have_last_ = false;
  MigrateProgress progress_;
  MigrateSummary summary_;
};

}  // namespace skv::migration

#endif  // SKV_NATIVE_MIGRATE_TREE_SINK_H_
