// SlotPool: the logical files of one database kept in a pool of pre-opened OPFS files ("slots").
//
// Each slot holds at most one logical file (a log file, an object or a pointer record), named by
// the slot's header (slot_header.h); the file's bytes follow the 4 KiB header area. Creating a
// file takes a free slot and writes its header; removing one rewrites the header as free and then
// truncates the slot back to its header area, which gives the bytes back to the browser's quota.
//
// Durability (the model of platform/memory, which the engine's recovery is tested against):
//   - File bytes are durable after sync() of that file (or finish() of an object). Appends are
//     buffered in memory per slot (up to OpfsOptions::write_buffer_bytes, then written with one
//     handle call, since every OPFS write() costs ~50 us whatever its size); reads see them.
//   - A created file's name is durable after its first sync()/finish() or the next sync_names();
//     a removal is durable after sync_names(). A create that replaces an existing name flushes the
//     new header before freeing the old slot, so a crash keeps one or the other.
//   - write_pointer() is atomic and durable when it returns: the record goes to a fresh slot with
//     a higher generation, which is flushed before the old slot is freed.
//
// Recovery (open): every slot header is read. Blank and free slots are free. When two slots hold
// the same name, the one with the higher generation wins and the other, provably older, is freed
// (two claims with the same generation cannot be ordered: both are quarantined). A slot whose
// header is damaged is reported as Code::Corruption naming the slot and is never freed on its
// own: open fails, or, with OpfsOptions::open_with_damaged_slots, the slot is quarantined (kept
// out of use) and listed by damaged_slots() until release_damaged_slot() discards it.
//
// The reserve: creating a file when no slot is free fails with Code::Quota ("slot pool
// exhausted") before anything is written; the last free slot is kept for write_pointer(), so a
// manifest switch cannot fail half way for want of a slot. Opening a slot is asynchronous in the
// browser, so the JS wrapper checks needs_more_slots() between calls, appends new handles to the
// table and calls add_slots().
//
// Files are held open by pinning their slot: a removed file stays readable through handles
// opened before (as on POSIX), and its slot is reused only after the last one is unpinned.
//
// Thread safety: designed for the one worker thread that owns the handles; every public method
// takes one mutex, so calls from several threads (native tests) are serialized and safe.

#ifndef SKV_PLATFORM_OPFS_SLOT_POOL_H_
#define SKV_PLATFORM_OPFS_SLOT_POOL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "platform/opfs/slot_handles.h"
#include "platform/opfs/slot_header.h"
#include "skv/status.h"

namespace skv {

struct OpfsOptions {
  // Free slots the pool wants on hand; needs_more_slots() is true below this.
  size_t reserve_slots = 4;
  // Bytes a file buffers before they are written with one handle call.
  size_t write_buffer_bytes = 1 << 20;
  // Open even if some slot headers are damaged (quarantining those slots) instead of failing with
  // Code::Corruption.
  bool open_with_damaged_slots = false;
};

struct SlotPoolStats {
  size_t slots = 0;          // slots in the pool
  size_t used = 0;           // holding a file or a pointer record
  size_t free = 0;           // ready for a new file now
  size_t releasing = 0;      // removed; reusable after a flush (or when its last handle closes)
  size_t damaged = 0;        // quarantined
  uint64_t torn_copies = 0;  // at open: header copies damaged beside a valid one
  uint64_t duplicates_dropped = 0;  // at open: older slots holding a name a newer slot holds
  uint64_t handle_reads = 0;
  uint64_t handle_writes = 0;
  uint64_t handle_flushes = 0;
};

class SlotPool {
 public:
  // Recovers the pool from the slot headers. Corruption naming the damaged slots if any header is
  // damaged (unless options.open_with_damaged_slots); the mapped handle error if a slot cannot be
  // read. `location` ("opfs:<db>") prefixes every message.
  static Result<std::shared_ptr<SlotPool>> open(std::string location,
                                                std::shared_ptr<SlotHandles> handles,
                                                const OpfsOptions& options);

  SlotPool(const SlotPool&) = delete;
  SlotPool& operator=(const SlotPool&) = delete;
  ~SlotPool();

  const std::string& location() const { return location_; }

  // --- names. Log files and objects share one namespace; pointer records have their own. -----

  // Creates an empty file `name` of `kind` (Log or Object) and pins its slot. With `replace` an
  // existing file of that name is replaced, else InvalidArgument. Quota when no slot is free.
  Result<size_t> create_file(const std::string& name, SlotKind kind, bool replace);
  // Pins the slot of the existing file `name` of `kind`. NotFound if there is none;
  // InvalidArgument for an object whose writer has not finished.
  Result<size_t> open_file(const std::string& name, SlotKind kind);
  // Removes a file. NotFound if there is none.
  Status remove_file(const std::string& name);
  // The names of every file of `kind`.
  std::vector<std::string> list_files(SlotKind kind);
  Status write_pointer(const std::string& name, std::string_view contents);
  Result<std::string> read_pointer(const std::string& name);
  // Makes every create and remove so far durable (flushes the slots whose header changed).
  Status sync_names();

  // --- a pinned slot. REQUIRES: `slot` was returned by create_file/open_file and not unpinned. ---

  Status append(size_t slot, std::string_view data);
  // Writes the buffered bytes and flushes the slot.
  Status sync(size_t slot);
  uint64_t file_size(size_t slot);
  // Same contract as LogFile::read_at; the bytes always land in `scratch`.
  Status read(size_t slot, uint64_t offset, size_t n, char* scratch, std::string_view* result);
  // Shrinks the file to `size` bytes; zeros reserved past its end go too.
  Status truncate(size_t slot, uint64_t size);
  // LogFile::reserve: makes the slot's file hold at least `bytes` data bytes, writing zeros past
  // its end (one handle write, not flushed) when it holds fewer. file_size() is unchanged.
  // Writes inside the zeros replace them without growing the file, and a flush after such a
  // write costs less (docs/web.md, "Commits and durability").
  Status reserve(size_t slot, uint64_t bytes);
  // Objects: syncs the slot and makes the object openable.
  Status finish_object(size_t slot);
  // Objects: removes an unfinished object. Best effort.
  void discard_object(size_t slot);
  // Releases a pin. The last unpin writes buffered bytes out (without flushing them) and lets a
  // removed file's slot be reused.
  Status unpin(size_t slot);

  // --- the reserve ---------------------------------------------------------------------------

  // Slots a create could take now (free ones plus removed ones a flush would free).
  size_t free_slots();
  // True when free_slots() is below OpfsOptions::reserve_slots.
  bool needs_more_slots();
  // How many slots to add to get back to the reserve (0 if none).
  size_t slots_wanted();
  // Takes into use the `n` slots the shim appended to the handle table. They must be blank or
  // free; one that holds data is quarantined and reported (InvalidArgument).
  Status add_slots(size_t n);

  SlotPoolStats stats();
  // One Corruption status per quarantined slot, naming it.
  std::vector<Status> damaged_slots();
  // Discards a quarantined slot: rewrites its header as free (flushed) and truncates its data.
  // InvalidArgument if the slot is not quarantined.
  Status release_damaged_slot(size_t slot);

  // Writes buffered bytes out and flushes pending header changes (best effort); every later call
  // fails with Code::IO. Called when the Storage closes; idempotent.
  void close();

 private:
  // What the pool knows about one slot.
  struct Slot {
    enum class Use : uint8_t { Free, Used, Releasing, Damaged };
    Use use = Use::Free;
    SlotHeader header;             // the newest header written (durable or not)
    int durable_copy = -1;         // the copy holding the newest durable header; -1: blank
    int dirty_copy = -1;           // a copy written since the last flush; -1: none
    bool dirty_is_mirror = false;  // that write repeats the durable header (see flush_slot)
    uint64_t stored = 0;           // data bytes in the file, after the header area
    uint64_t room = 0;             // data bytes the handle's file holds: stored, or more when
                                   // zeros were reserved past it (reserve())
    std::string buffer;            // appended bytes not written yet; they follow `stored`
    int pins = 0;                  // open handles
    bool finished = true;          // objects: finish() was called
    std::string problem;           // Damaged: the message
  };

  SlotPool(std::string location, std::shared_ptr<SlotHandles> handles, OpfsOptions options);

  // Everything below REQUIRES: mu_ held.
  Status check_open() const;
  std::string target(size_t slot) const;
  std::string file_target(std::string_view name) const;
  Status handle_error(size_t slot, std::string_view op, const HandleError& e) const;
  Status load_slot(size_t slot, bool added);
  Status resolve_duplicates();
  Status adopt_new_slots();
  Status write_header(size_t slot, SlotHeader header);
  Status flush_slot(size_t slot, bool with_buffer = true);
  Status write_out(size_t slot);
  Status release_slot(size_t slot);
  void finish_release(size_t slot);
  Status prepare_free_slot(size_t slot);
  Result<size_t> take_free_slot(std::string_view name, bool for_pointer);
  size_t count_free(bool include_reclaimable) const;
  Status check_pinned(size_t slot, bool writable) const;

  const std::string location_;
  const std::shared_ptr<SlotHandles> handles_;
  const OpfsOptions options_;

  std::mutex mu_;
  std::vector<Slot> slots_;
  std::map<std::string, size_t> files_;     // logs and objects
  std::map<std::string, size_t> pointers_;  // pointer records
  uint64_t next_generation_ = 1;
  bool closed_ = false;
  SlotPoolStats counters_;  // the counting fields only
};

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_SLOT_POOL_H_
