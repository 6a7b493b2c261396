// SlotHandles: the synchronous file calls the OPFS platform needs, one table of pre-opened files
// ("slots") per database. In the browser a small JavaScript shim implements it over
// FileSystemSyncAccessHandle objects opened (asynchronously) before the database opens; natively a
// fake implements it for tests (tests/support/fake_slots/fake_slot_handles.h).
//
// Slots are numbered 0 .. slot_count() - 1. The shim may append slots at the end between calls
// (the pool tops up its reserve that way); it never removes or reorders them while a database is
// open. Offsets are bytes from the start of the slot's file. A write past the end extends the
// file (the gap reads as zeros); a read that reaches the end returns fewer bytes.
//
// Errors: a failed call returns a HandleError carrying the DOMException name the browser raised
// ("QuotaExceededError", "InvalidStateError", ...) and its message; opfs_handle_error() in
// opfs_error.h turns it into a Status. Calls never throw: the shim catches JavaScript exceptions.
//
// Durability: bytes written or truncated are durable only after flush() of that slot returns OK.
// A crash may keep any prefix of the calls made since the last flush, and tear the first call it
// drops.
//
// Thread safety: none. An implementation is called from one thread at a time (the worker that
// owns the handles).

#ifndef SKV_PLATFORM_OPFS_SLOT_HANDLES_H_
#define SKV_PLATFORM_OPFS_SLOT_HANDLES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace skv {

// The outcome of one handle call: OK when `name` is empty, else the DOMException name and message.
struct HandleError {
  std::string name;
  std::string message;

  bool ok() const { return name.empty(); }
  static HandleError none() { return HandleError(); }
  static HandleError make(std::string error_name, std::string error_message) {
    return HandleError{std::move(error_name), std::move(error_message)};
  }
};

class SlotHandles {
 public:
  SlotHandles() = default;
  SlotHandles(const SlotHandles&) = delete;
  SlotHandles& operator=(const SlotHandles&) = delete;
  virtual ~SlotHandles() = default;

  // Number of slots now open.
  virtual size_t slot_count() const = 0;

  // Reads up to `n` bytes at `offset` into `dst`; *bytes_read is how many were read (fewer at
  // the end of the file, 0 at or past it).
  virtual HandleError read(size_t slot, uint64_t offset, char* dst, size_t n,
                           size_t* bytes_read) = 0;

  // Writes all of `bytes` at `offset`. A short write is reported as an error by the shim.
  virtual HandleError write(size_t slot, uint64_t offset, std::string_view bytes) = 0;

  // Sets the file's size to `size` bytes (growing fills with zeros).
  virtual HandleError truncate(size_t slot, uint64_t size) = 0;

  // The file's current size in bytes.
  virtual HandleError size(size_t slot, uint64_t* size) = 0;

  // Makes every write and truncate of this slot so far durable.
  virtual HandleError flush(size_t slot) = 0;
};

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_SLOT_HANDLES_H_
