// The state behind MemoryPlatform (internal to platform/memory): one MemoryDatabase per path,
// MemoryFile contents, and the factory of Storage objects.
//
// Locking: MemoryPlatform::mu_ before MemoryDatabase::mu before MemoryFile::mu. Everything that
// changes a namespace, a lock, a quota or the byte count holds the database mutex; reads of file
// bytes hold only the file mutex.

#ifndef SKV_PLATFORM_MEMORY_MEMORY_STATE_H_
#define SKV_PLATFORM_MEMORY_MEMORY_STATE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/memory/memory_platform.h"
#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

struct MemoryFile {
  mutable std::mutex mu;
  std::string data;     // current bytes
  uint64_t synced = 0;  // data[0, synced) is durable (unless durable_override is set)
  // Set when truncate() cut into the durable bytes since the last sync: the durable contents.
  std::optional<std::string> durable_override;
  bool is_object = false;
  bool finished = true;  // objects: the writer called finish()

  // REQUIRES: mu held.
  void mark_synced() {
    synced = data.size();
    durable_override.reset();
  }
};

using MemoryFileMap = std::map<std::string, std::shared_ptr<MemoryFile>>;

struct MemoryDatabase {
  explicit MemoryDatabase(std::string p) : path(std::move(p)), location("mem:" + path) {}

  const std::string path;
  const std::string location;  // "mem:<path>"

  std::mutex mu;
  MemoryFileMap live;     // the namespace now
  MemoryFileMap durable;  // the namespace at the last sync_dir()
  std::map<std::string, std::string> pointers;
  std::atomic<uint64_t> generation{0};  // bumped by crash(); stale handles compare it
  uint64_t lock_token = 0;              // 0: not open for writing
  int readers = 0;                      // read-only storages open (StorageOptions::read_only)
  uint64_t used = 0;                    // bytes of live files plus pointers
  uint64_t quota = MemoryPlatform::kNoQuota;

  // "mem:<path>/<name>".
  std::string label(std::string_view name) const {
    std::string s = location;
    s += '/';
    s.append(name);
    return s;
  }
  // REQUIRES: mu held.
  bool is_live(const std::string& name, const MemoryFile* file) const {
    auto it = live.find(name);
    return it != live.end() && it->second.get() == file;
  }
};

// The shared name rule of list() (see memory_platform.h).
bool memory_is_object_name(std::string_view name);
bool memory_is_log_name(std::string_view name);

// A Storage over `db` holding the lock `token` (or, read-only, one of db->readers); it releases
// it when destroyed. REQUIRES: db->mu held.
std::unique_ptr<Storage> make_memory_storage(std::shared_ptr<MemoryDatabase> db, uint64_t token,
                                             bool read_only);

}  // namespace skv

#endif  // SKV_PLATFORM_MEMORY_MEMORY_STATE_H_
