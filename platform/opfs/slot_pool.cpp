// SlotPool: names, file I/O and slot life cycle. Recovery and the reserve live in
// slot_pool_recovery.cpp.

#include <algorithm>
#include <cstring>
#include <utility>

#include "platform/opfs/opfs_error.h"
#include "platform/opfs/slot_pool.h"
#include "util/status_macros.h"

namespace skv {

namespace {

bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= kSlotMaxNameBytes && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

}  // namespace

SlotPool::SlotPool(std::string location, std::shared_ptr<SlotHandles> handles, OpfsOptions options)
    : location_(std::move(location)), handles_(std::move(handles)), options_(options) {}

SlotPool::~SlotPool() { close(); }

// --- helpers (mu_ held) ------------------------------------------------------------------------

Status SlotPool::check_open() const {
  if (closed_) return Status::io_error(location_ + ": storage is closed");
  return Status::OK();
}

std::string SlotPool::target(size_t slot) const {
  const Slot& s = slots_[slot];
  return opfs_slot_target(location_, s.header.used ? s.header.name : std::string(), slot);
}

std::string SlotPool::file_target(std::string_view name) const {
  std::string t = location_;
  t += '/';
  t.append(name);
  return t;
}

Status SlotPool::handle_error(size_t slot, std::string_view op, const HandleError& e) const {
  return opfs_handle_error(target(slot), op, e);
}

Status SlotPool::write_header(size_t slot, SlotHeader header) {
  Slot& s = slots_[slot];
  header.generation = next_generation_++;
  // Never overwrite the copy holding the newest durable header: a torn write then damages only
  // a copy that was never durable.
  const int copy = s.durable_copy < 0 ? 0 : 1 - s.durable_copy;
  ++counters_.handle_writes;
  HandleError e = handles_->write(slot, static_cast<uint64_t>(copy) * kSlotHeaderCopySize,
                                  encode_slot_header(header));
  s.dirty_copy = copy;
  if (!e.ok()) {
    s.dirty_is_mirror = true;  // whatever landed there is not a header we rely on
    return handle_error(slot, "write header", e);
  }
  s.dirty_is_mirror = false;
  s.header = std::move(header);
  return Status::OK();
}

Status SlotPool::write_out(size_t slot) {
  Slot& s = slots_[slot];
  if (s.buffer.empty()) return Status::OK();
  const uint64_t offset = kSlotHeaderArea + s.stored;
  ++counters_.handle_writes;
  HandleError e = handles_->write(slot, offset, s.buffer);
  if (!e.ok()) {
    // Drop whatever part of the write landed, so a retry starts from a known size.
    (void)handles_->truncate(slot, offset);
    s.room = s.stored;
    return handle_error(
        slot, "write of " + std::to_string(s.buffer.size()) + " bytes at " + std::to_string(offset),
        e);
  }
  s.stored += s.buffer.size();
  s.room = std::max(s.room, s.stored);
  s.buffer.clear();
  return Status::OK();
}

Status SlotPool::flush_slot(size_t slot, bool with_buffer) {
  if (with_buffer) SKV_RETURN_IF_ERROR(write_out(slot));
  ++counters_.handle_flushes;
  HandleError e = handles_->flush(slot);
  if (!e.ok()) return handle_error(slot, "flush", e);
  Slot& s = slots_[slot];
  if (s.dirty_copy >= 0) {
    if (!s.dirty_is_mirror) {
      // The new header is durable. Repeat it in the other copy, so that damage to one copy later
      // falls back to the same state, not to the one before; the repeat becomes durable with the
      // slot's next flush. A failed repeat only leaves that protection out.
      s.durable_copy = s.dirty_copy;
      const int other = 1 - s.durable_copy;
      ++counters_.handle_writes;
      (void)handles_->write(slot, static_cast<uint64_t>(other) * kSlotHeaderCopySize,
                            encode_slot_header(s.header));
      s.dirty_copy = other;
      s.dirty_is_mirror = true;
    } else {
      s.dirty_copy = -1;
      s.dirty_is_mirror = false;
    }
  }
  if (s.use == Slot::Use::Releasing && s.pins == 0) finish_release(slot);
  return Status::OK();
}

void SlotPool::finish_release(size_t slot) {
  Slot& s = slots_[slot];
  s.buffer.clear();
  if (s.room > 0) {
    // Give the bytes back to the quota. Not flushed: if a crash undoes it, the slot is free
    // anyway and is truncated again before reuse.
    if (handles_->truncate(slot, kSlotHeaderArea).ok()) s.stored = s.room = 0;
  }
  s.use = Slot::Use::Free;
  s.finished = true;
}

Status SlotPool::release_slot(size_t slot) {
  SKV_RETURN_IF_ERROR(write_header(slot, SlotHeader()));
  Slot& s = slots_[slot];
  s.use = Slot::Use::Releasing;
  s.buffer.clear();
  return Status::OK();
}

Status SlotPool::prepare_free_slot(size_t slot) {
  Slot& s = slots_[slot];
  if (s.room > 0) {
    HandleError e = handles_->truncate(slot, kSlotHeaderArea);
    if (!e.ok()) return handle_error(slot, "truncate", e);
    s.stored = s.room = 0;
  }
  s.buffer.clear();
  return Status::OK();
}

size_t SlotPool::count_free(bool include_reclaimable) const {
  size_t n = 0;
  for (const Slot& s : slots_) {
    if (s.use == Slot::Use::Free) ++n;
    if (include_reclaimable && s.use == Slot::Use::Releasing && s.pins == 0) ++n;
  }
  return n;
}

Result<size_t> SlotPool::take_free_slot(std::string_view name, bool for_pointer) {
  (void)adopt_new_slots();  // slots the shim appended since the last call
  // A log file or object may not take the last free slot: it is kept for write_pointer().
  const size_t need = for_pointer ? 1 : 2;
  for (size_t i = 0; i < slots_.size() && count_free(false) < need; ++i) {
    if (slots_[i].use == Slot::Use::Releasing && slots_[i].pins == 0) {
      SKV_RETURN_IF_ERROR(flush_slot(i));  // makes the removal durable and frees the slot
    }
  }
  if (count_free(false) < need) {
    SlotPoolStats st;
    for (const Slot& s : slots_) {
      if (s.use == Slot::Use::Used) ++st.used;
      if (s.use == Slot::Use::Releasing) ++st.releasing;
      if (s.use == Slot::Use::Damaged) ++st.damaged;
    }
    std::string msg = file_target(name) + ": slot pool exhausted (" +
                      std::to_string(slots_.size()) + " slots: " + std::to_string(st.used) +
                      " used, " + std::to_string(st.releasing) + " held by open handles, " +
                      std::to_string(st.damaged) + " damaged";
    if (!for_pointer) msg += "; the last free slot is kept for pointer records";
    msg += "); add slots and retry";
    return Status::quota(msg);
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].use != Slot::Use::Free) continue;
    SKV_RETURN_IF_ERROR(prepare_free_slot(i));
    return i;
  }
  return Status::quota(file_target(name) + ": slot pool exhausted");  // not reached
}

Status SlotPool::check_pinned(size_t slot, bool writable) const {
  SKV_RETURN_IF_ERROR(check_open());
  if (slot >= slots_.size() || slots_[slot].pins <= 0) {
    return Status::invalid_argument(location_ + ": slot " + std::to_string(slot) + " is not open");
  }
  if (writable && slots_[slot].use != Slot::Use::Used) {
    return Status::io_error(target(slot) + ": the file was removed");
  }
  return Status::OK();
}

// --- names -------------------------------------------------------------------------------------

Result<size_t> SlotPool::create_file(const std::string& name, SlotKind kind, bool replace) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  if (!valid_name(name)) return Status::invalid_argument(file_target(name) + ": invalid name");
  auto existing = files_.find(name);
  if (existing != files_.end() && !replace) {
    return Status::invalid_argument(file_target(name) + ": create: file already exists");
  }
  SKV_ASSIGN_OR_RETURN(size_t slot, take_free_slot(name, false));
  SlotHeader h;
  h.used = true;
  h.kind = kind;
  h.name = name;
  SKV_RETURN_IF_ERROR(write_header(slot, std::move(h)));
  Slot& s = slots_[slot];
  s.use = Slot::Use::Used;
  s.pins = 1;
  s.finished = kind != SlotKind::Object;
  if (existing != files_.end()) {
    // The replacement's header is durable before the old slot is freed, so a crash keeps one.
    Status st = flush_slot(slot);
    if (!st.ok()) {
      slots_[slot].pins = 0;
      (void)release_slot(slot);
      return st;
    }
    // If freeing fails the old slot stays claimed until the next open drops it as the older of
    // two slots holding the name.
    (void)release_slot(existing->second);
  }
  files_[name] = slot;
  return slot;
}

Result<size_t> SlotPool::open_file(const std::string& name, SlotKind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  if (!valid_name(name)) return Status::invalid_argument(file_target(name) + ": invalid name");
  auto it = files_.find(name);
  if (it == files_.end()) return Status::not_found(file_target(name) + ": open: no such file");
  Slot& s = slots_[it->second];
  if (s.header.kind != kind) {
    return Status::invalid_argument(target(it->second) + ": open: the slot holds a " +
                                    slot_kind_name(s.header.kind) + ", not a " +
                                    slot_kind_name(kind));
  }
  if (!s.finished) {
    return Status::invalid_argument(target(it->second) + ": open: object is still being written");
  }
  ++s.pins;
  return it->second;
}

Status SlotPool::remove_file(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  if (!valid_name(name)) return Status::invalid_argument(file_target(name) + ": invalid name");
  auto it = files_.find(name);
  if (it == files_.end()) return Status::not_found(file_target(name) + ": remove: no such file");
  SKV_RETURN_IF_ERROR(release_slot(it->second));
  files_.erase(it);
  return Status::OK();
}

std::vector<std::string> SlotPool::list_files(SlotKind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, slot] : files_) {
    if (slots_[slot].header.kind == kind) names.push_back(name);
  }
  return names;
}

Status SlotPool::write_pointer(const std::string& name, std::string_view contents) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  if (!valid_name(name)) return Status::invalid_argument(file_target(name) + ": invalid name");
  if (contents.size() > kSlotMaxPointerBytes) {
    return Status::invalid_argument(file_target(name) + ": pointer record of " +
                                    std::to_string(contents.size()) + " bytes exceeds " +
                                    std::to_string(kSlotMaxPointerBytes));
  }
  SKV_ASSIGN_OR_RETURN(size_t slot, take_free_slot(name, true));
  SlotHeader h;
  h.used = true;
  h.kind = SlotKind::Pointer;
  h.name = name;
  h.payload.assign(contents);
  SKV_RETURN_IF_ERROR(write_header(slot, std::move(h)));
  slots_[slot].use = Slot::Use::Used;
  Status st = flush_slot(slot);
  if (!st.ok()) {
    // Not acknowledged: a crash may still bring it back, as the newer of the two records.
    (void)release_slot(slot);
    return st;
  }
  auto old = pointers_.find(name);
  if (old != pointers_.end()) (void)release_slot(old->second);  // see create_file
  pointers_[name] = slot;
  return Status::OK();
}

Result<std::string> SlotPool::read_pointer(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  if (!valid_name(name)) return Status::invalid_argument(file_target(name) + ": invalid name");
  auto it = pointers_.find(name);
  if (it == pointers_.end()) return Status::not_found(file_target(name) + ": no such pointer");
  return slots_[it->second].header.payload;
}

Status SlotPool::sync_names() {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.dirty_copy < 0) continue;
    // A new header must become durable; the repeat of a durable one (see flush_slot) is worth a
    // flush only for a slot in use (a free slot's copies matter little).
    // Buffered bytes stay buffered: names are what this call makes durable.
    if (!s.dirty_is_mirror || s.use == Slot::Use::Used) {
      SKV_RETURN_IF_ERROR(flush_slot(i, /*with_buffer=*/false));
    }
  }
  return Status::OK();
}

// --- a pinned slot -----------------------------------------------------------------------------

Status SlotPool::append(size_t slot, std::string_view data) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_pinned(slot, true));
  Slot& s = slots_[slot];
  const size_t before = s.buffer.size();
  s.buffer.append(data);
  if (s.buffer.size() >= options_.write_buffer_bytes) {
    Status st = write_out(slot);
    if (!st.ok()) {
      slots_[slot].buffer.resize(before);  // this append fails as a whole
      return st;
    }
  }
  return Status::OK();
}

Status SlotPool::sync(size_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_pinned(slot, true));
  return flush_slot(slot);
}

uint64_t SlotPool::file_size(size_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slot >= slots_.size()) return 0;
  return slots_[slot].stored + slots_[slot].buffer.size();
}

Status SlotPool::read(size_t slot, uint64_t offset, size_t n, char* scratch,
                      std::string_view* result) {
  std::lock_guard<std::mutex> lock(mu_);
  *result = std::string_view(scratch, 0);
  SKV_RETURN_IF_ERROR(check_pinned(slot, false));
  const Slot& s = slots_[slot];
  const uint64_t size = s.stored + s.buffer.size();
  if (offset >= size) return Status::OK();
  const size_t want = static_cast<size_t>(std::min<uint64_t>(n, size - offset));
  size_t done = 0;
  if (offset < s.stored) {
    const size_t from_file = static_cast<size_t>(std::min<uint64_t>(want, s.stored - offset));
    size_t got = 0;
    ++counters_.handle_reads;
    HandleError e = handles_->read(slot, kSlotHeaderArea + offset, scratch, from_file, &got);
    if (!e.ok()) {
      return handle_error(slot,
                          "read of " + std::to_string(from_file) + " bytes at " +
                              std::to_string(kSlotHeaderArea + offset),
                          e);
    }
    if (got != from_file) {
      return Status::io_error(target(slot) + ": short read at " +
                              std::to_string(kSlotHeaderArea + offset) + " (" +
                              std::to_string(got) + " of " + std::to_string(from_file) +
                              " bytes): the slot file is shorter than the pool expects");
    }
    done = from_file;
  }
  if (done < want) {
    const uint64_t in_buffer = offset + done - s.stored;
    std::memcpy(scratch + done, s.buffer.data() + in_buffer, want - done);
    done = want;
  }
  *result = std::string_view(scratch, done);
  return Status::OK();
}

Status SlotPool::truncate(size_t slot, uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_pinned(slot, true));
  Slot& s = slots_[slot];
  const uint64_t now = s.stored + s.buffer.size();
  if (size > now) {
    return Status::invalid_argument(target(slot) + ": truncate to " + std::to_string(size) +
                                    " would grow a file of " + std::to_string(now) + " bytes");
  }
  if (size >= s.stored) {
    if (s.room > s.stored) {
      // Reserved zeros go; the buffered bytes kept are written at `stored` later, as before.
      HandleError e = handles_->truncate(slot, kSlotHeaderArea + s.stored);
      if (!e.ok()) return handle_error(slot, "truncate to " + std::to_string(size), e);
      s.room = s.stored;
    }
    s.buffer.resize(static_cast<size_t>(size - s.stored));
    return Status::OK();
  }
  HandleError e = handles_->truncate(slot, kSlotHeaderArea + size);
  if (!e.ok()) return handle_error(slot, "truncate to " + std::to_string(size), e);
  s.buffer.clear();
  s.stored = s.room = size;
  return Status::OK();
}

Status SlotPool::reserve(size_t slot, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_pinned(slot, true));
  Slot& s = slots_[slot];
  if (bytes <= s.room) return Status::OK();
  // Zeros written, not a truncate that extends the file: a truncate leaves a hole, and filling
  // a hole later costs the flush about what growing the file does (docs/web.md). Any bytes
  // still buffered belong at `stored`, before or inside this range; they are written later,
  // over the zeros.
  ++counters_.handle_writes;
  HandleError e =
      handles_->write(slot, kSlotHeaderArea + s.room, std::string(bytes - s.room, '\0'));
  if (!e.ok()) {
    // The zeros may have landed in part: cut back to the bytes written, as a failed write.
    (void)handles_->truncate(slot, kSlotHeaderArea + s.stored);
    s.room = s.stored;
    return handle_error(slot, "reserve of " + std::to_string(bytes) + " bytes", e);
  }
  s.room = bytes;
  return Status::OK();
}

Status SlotPool::finish_object(size_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_pinned(slot, true));
  SKV_RETURN_IF_ERROR(flush_slot(slot));
  slots_[slot].finished = true;
  return Status::OK();
}

void SlotPool::discard_object(size_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || slot >= slots_.size() || slots_[slot].use != Slot::Use::Used) return;
  const std::string name = slots_[slot].header.name;
  auto it = files_.find(name);
  if (it == files_.end() || it->second != slot) return;
  if (release_slot(slot).ok()) files_.erase(it);
}

Status SlotPool::unpin(size_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slot >= slots_.size() || slots_[slot].pins <= 0) return Status::OK();
  Slot& s = slots_[slot];
  if (--s.pins > 0 || closed_) return Status::OK();
  if (s.use == Slot::Use::Used) return write_out(slot);
  const bool header_durable = s.dirty_copy < 0 || s.dirty_is_mirror;
  if (s.use == Slot::Use::Releasing && header_durable) finish_release(slot);
  return Status::OK();
}

}  // namespace skv
