// The one place where the OPFS platform turns a handle error (a DOMException name) into a Status.
//
// "QuotaExceededError" (the origin's storage quota is used up) is Code::Quota; every other name
// ("InvalidStateError" for a closed handle, "NoModificationAllowedError", "NotReadableError",
// ...) is Code::IO. The message names the slot, the logical file it holds and the operation:
// "opfs:mydb/000007.wal (slot 3): write of 4096 bytes at 8192: QuotaExceededError: <message>".
//
// Thread safety: pure functions, callable from any thread.

#ifndef SKV_PLATFORM_OPFS_OPFS_ERROR_H_
#define SKV_PLATFORM_OPFS_OPFS_ERROR_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "platform/opfs/slot_handles.h"
#include "skv/status.h"

namespace skv {

// The code a DOMException name maps to.
Code opfs_error_code(std::string_view dom_exception_name);

// A Status for `error` (REQUIRES: !error.ok()) raised by `op` on `target`, where target is
// "<location>/<file> (slot N)" or "<location> (slot N)" for a slot that holds no file.
Status opfs_handle_error(std::string_view target, std::string_view op, const HandleError& error);

// "<location>/<file> (slot N)", or "<location> (slot N)" when `file` is empty.
std::string opfs_slot_target(std::string_view location, std::string_view file, size_t slot);

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_OPFS_ERROR_H_
