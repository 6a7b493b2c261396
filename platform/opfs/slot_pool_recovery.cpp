// SlotPool: recovery at open, duplicates, quarantine of damaged slots, the reserve and close.

#include <algorithm>
#include <utility>

#include "platform/opfs/opfs_error.h"
#include "platform/opfs/slot_pool.h"
#include "util/status_macros.h"

namespace skv {

Result<std::shared_ptr<SlotPool>> SlotPool::open(std::string location,
                                                 std::shared_ptr<SlotHandles> handles,
                                                 const OpfsOptions& options) {
  if (handles == nullptr) return Status::invalid_argument(location + ": no slot handles");
  std::shared_ptr<SlotPool> pool(new SlotPool(std::move(location), std::move(handles), options));
  std::lock_guard<std::mutex> lock(pool->mu_);
  const size_t n = pool->handles_->slot_count();
  for (size_t i = 0; i < n; ++i) SKV_RETURN_IF_ERROR(pool->load_slot(i, false));
  SKV_RETURN_IF_ERROR(pool->resolve_duplicates());
  return pool;
}

Status SlotPool::load_slot(size_t slot, bool added) {
  // REQUIRES: slot == slots_.size().
  const std::string bare = opfs_slot_target(location_, "", slot);
  uint64_t size = 0;
  HandleError e = handles_->size(slot, &size);
  if (!e.ok()) return opfs_handle_error(bare, "size", e);
  std::string area(static_cast<size_t>(std::min<uint64_t>(size, kSlotHeaderArea)), '\0');
  if (!area.empty()) {
    size_t got = 0;
    ++counters_.handle_reads;
    e = handles_->read(slot, 0, area.data(), area.size(), &got);
    if (!e.ok()) return opfs_handle_error(bare, "read header", e);
    area.resize(got);
  }
  const SlotHeaderRead r = read_slot_header(area);
  Slot s;
  // Reserved zeros past a log's last write (reserve()) cannot be told from data here: they count
  // as data, and the log's reader finds them after its last record.
  s.stored = size > kSlotHeaderArea ? size - kSlotHeaderArea : 0;
  s.room = s.stored;
  switch (r.outcome) {
    case SlotHeaderRead::Outcome::Blank:
      s.use = Slot::Use::Free;
      break;
    case SlotHeaderRead::Outcome::Valid:
      s.header = r.header;
      s.durable_copy = r.copy;
      s.use = s.header.used ? Slot::Use::Used : Slot::Use::Free;
      next_generation_ = std::max(next_generation_, r.max_generation + 1);
      if (r.other_damaged) ++counters_.torn_copies;
      break;
    case SlotHeaderRead::Outcome::Damaged:
      s.use = Slot::Use::Damaged;
      s.problem = bare + ": damaged slot header (" + r.problem + ")";
      break;
  }
  Status result;
  if (added && s.use == Slot::Use::Used) {
    s.use = Slot::Use::Damaged;
    s.problem = bare + ": an added slot already holds " + slot_kind_name(s.header.kind) + " " +
                s.header.name;
    result = Status::invalid_argument(s.problem + "; it is kept out of use");
  } else if (added && s.use == Slot::Use::Damaged) {
    result = Status::corruption(s.problem + "; it is kept out of use");
  }
  slots_.push_back(std::move(s));
  if (slots_.back().use == Slot::Use::Free && slots_.back().stored > 0) {
    // A file freed before a crash undid its truncation: give the bytes back.
    if (handles_->truncate(slot, kSlotHeaderArea).ok())
      slots_.back().stored = slots_.back().room = 0;
  }
  return result;
}

Status SlotPool::resolve_duplicates() {
  // Claims per name; pointer records and files are separate namespaces.
  std::map<std::pair<bool, std::string>, std::vector<size_t>> claims;
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].use != Slot::Use::Used) continue;
    const SlotHeader& h = slots_[i].header;
    claims[{h.kind == SlotKind::Pointer, h.name}].push_back(i);
  }
  std::vector<size_t> losers;
  for (auto& [key, slots] : claims) {
    if (slots.size() == 1) continue;
    std::sort(slots.begin(), slots.end(), [this](size_t a, size_t b) {
      return slots_[a].header.generation > slots_[b].header.generation;
    });
    const uint64_t top = slots_[slots[0]].header.generation;
    if (slots_[slots[1]].header.generation == top) {
      // Two claims that cannot be ordered: nothing is provably older, so nothing is freed.
      std::string list;
      for (size_t i : slots) list += (list.empty() ? "" : ", ") + std::to_string(i);
      for (size_t i : slots) {
        slots_[i].use = Slot::Use::Damaged;
        slots_[i].problem = opfs_slot_target(location_, key.second, i) + ": slots " + list +
                            " all hold " + key.second + " and the newest claims share generation " +
                            std::to_string(top);
      }
      continue;
    }
    // Generations grow across the pool, so a lower one is an older header: the newer slot
    // replaced it (a create that replaced the file, or a newer pointer record) before a crash
    // stopped the older slot from being freed.
    losers.insert(losers.end(), slots.begin() + 1, slots.end());
  }

  std::vector<std::string> problems;
  for (const Slot& s : slots_) {
    if (s.use == Slot::Use::Damaged) problems.push_back(s.problem);
  }
  if (!problems.empty() && !options_.open_with_damaged_slots) {
    // Nothing has been written: the pool is left exactly as found.
    std::string msg = location_ + ": " + std::to_string(problems.size()) +
                      " damaged slot header(s); open with open_with_damaged_slots to quarantine "
                      "them: ";
    for (size_t i = 0; i < problems.size() && i < 4; ++i) msg += (i ? "; " : "") + problems[i];
    if (problems.size() > 4) msg += "; ...";
    return Status::corruption(msg);
  }

  for (size_t i : losers) {
    SKV_RETURN_IF_ERROR(release_slot(i));  // durable with the next flush; until then a crash
    ++counters_.duplicates_dropped;        // only brings the same choice back
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].use != Slot::Use::Used) continue;
    auto& names = slots_[i].header.kind == SlotKind::Pointer ? pointers_ : files_;
    names[slots_[i].header.name] = i;
  }
  return Status::OK();
}

Status SlotPool::adopt_new_slots() {
  Status first;
  const size_t n = handles_->slot_count();
  for (size_t i = slots_.size(); i < n; ++i) {
    Status s = load_slot(i, true);
    if (first.ok() && !s.ok()) first = std::move(s);
  }
  return first;
}

size_t SlotPool::free_slots() {
  std::lock_guard<std::mutex> lock(mu_);
  return count_free(true);
}

bool SlotPool::needs_more_slots() {
  std::lock_guard<std::mutex> lock(mu_);
  return count_free(true) < options_.reserve_slots;
}

size_t SlotPool::slots_wanted() {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t have = count_free(true);
  return have >= options_.reserve_slots ? 0 : options_.reserve_slots - have;
}

Status SlotPool::add_slots(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  const size_t have = handles_->slot_count();
  if (have < slots_.size() + n) {
    return Status::invalid_argument(
        location_ + ": add_slots(" + std::to_string(n) + "): the handle table has " +
        std::to_string(have) + " slots and the pool already uses " + std::to_string(slots_.size()));
  }
  return adopt_new_slots();
}

SlotPoolStats SlotPool::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  SlotPoolStats st = counters_;
  st.slots = slots_.size();
  st.used = st.free = st.releasing = st.damaged = 0;
  for (const Slot& s : slots_) {
    switch (s.use) {
      case Slot::Use::Free:
        ++st.free;
        break;
      case Slot::Use::Used:
        ++st.used;
        break;
      case Slot::Use::Releasing:
        ++st.releasing;
        break;
      case Slot::Use::Damaged:
        ++st.damaged;
        break;
    }
  }
  return st;
}

std::vector<Status> SlotPool::damaged_slots() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Status> out;
  for (const Slot& s : slots_) {
    if (s.use == Slot::Use::Damaged) out.push_back(Status::corruption(s.problem));
  }
  return out;
}

Status SlotPool::release_damaged_slot(size_t slot) {
  std::lock_guard<std::mutex> lock(mu_);
  SKV_RETURN_IF_ERROR(check_open());
  if (slot >= slots_.size() || slots_[slot].use != Slot::Use::Damaged) {
    return Status::invalid_argument(location_ + ": slot " + std::to_string(slot) +
                                    " is not quarantined");
  }
  Slot& s = slots_[slot];
  // Neither copy can be trusted: start over from copy 0.
  s.durable_copy = -1;
  s.dirty_copy = -1;
  s.header = SlotHeader();
  s.use = Slot::Use::Releasing;
  Status st = write_header(slot, SlotHeader());
  if (st.ok()) st = flush_slot(slot);  // frees it and truncates its data
  if (!st.ok()) {
    slots_[slot].use = Slot::Use::Damaged;
    return st;
  }
  return Status::OK();
}

void SlotPool::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  // Best effort: written bytes survive the worker going away (not a power loss), and removals
  // and new names become durable.
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].use == Slot::Use::Used) (void)write_out(i);
    if (slots_[i].dirty_copy >= 0 && !slots_[i].dirty_is_mirror) (void)flush_slot(i);
  }
  closed_ = true;
}

}  // namespace skv
