// copy_file: puts one file of a storage into another storage under the same name (checkpoints,
// restores, and any later import of a database's files).
//
// Thread safety: as the storages'; the source file must not change while it is copied.

#ifndef SKV_UTIL_FILE_COPY_H_
#define SKV_UTIL_FILE_COPY_H_

#include <cstdint>
#include <string>

#include "skv/platform.h"
#include "skv/status.h"

namespace skv {

enum class FileCopy : uint8_t {
  LinkOrCopy,  // Storage::link_from where the platform can, else a copy of the bytes
  Copy,        // always a copy (a file the source may still append to or truncate)
};

// Gives `to` the file `name` of `from`: an object (`object` true: written through an
// ObjectWriter and finished) or a log file (created, appended, synced). The copy is durable
// when this returns OK, except for its directory entry (Storage::sync_dir). *bytes (if given)
// receives the bytes copied (0 for a link). On failure a partly copied file is removed.
Status copy_file(Storage& from, Storage& to, const std::string& name, bool object, FileCopy how,
                 uint64_t* bytes = nullptr);

}  // namespace skv

#endif  // SKV_UTIL_FILE_COPY_H_
