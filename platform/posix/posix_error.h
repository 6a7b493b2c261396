// The one place where the POSIX platform turns an errno value into a Status.
//
// Running out of space (ENOSPC, EDQUOT) is Code::Quota, a missing file (ENOENT) is
// Code::NotFound, and everything else is Code::IO. The message names the file and the operation:
// "<dir>/<name>: <op>: <strerror>".
//
// Thread safety: a pure function, callable from any thread.

#ifndef SKV_PLATFORM_POSIX_POSIX_ERROR_H_
#define SKV_PLATFORM_POSIX_POSIX_ERROR_H_

#include <string_view>

#include "skv/status.h"

namespace skv {

// The code errno value `err` maps to.
Code posix_error_code(int err);

// A Status for `err` (REQUIRES: err != 0) raised by `op` on `target`, e.g.
// posix_error("data/db/000001.wal", "append", ENOSPC) is
// Quota "data/db/000001.wal: append: No space left on device".
Status posix_error(std::string_view target, std::string_view op, int err);

}  // namespace skv

#endif  // SKV_PLATFORM_POSIX_POSIX_ERROR_H_
