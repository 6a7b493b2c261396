#include "support/fake_slots/fake_slot_handles.h"
#include "util/random.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace skv {

namespace {

void apply_write(std::string* data, uint64_t offset, std::string_view bytes) {
  const size_t end = static_cast<size_t>(offset) + bytes.size();
  if (data->size() < end) data->resize(end, '\0');
  std::memcpy(data->data() + offset, bytes.data(), bytes.size());
}

}  // namespace

// One table of handles, bound to the disk's epoch at the time it was made.
class FakeSlotTable final : public SlotHandles {
 public:
  FakeSlotTable(std::shared_ptr<FakeSlotDisk::State> state, uint64_t epoch)
      : state_(std::move(state)), epoch_(epoch) {}

  size_t slot_count() const override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->files.size();
  }

  HandleError read(size_t slot, uint64_t offset, char* dst, size_t n, size_t* bytes_read) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    *bytes_read = 0;
    HandleError e = enter(FakeSlotDisk::Op::Read, slot);
    if (!e.ok()) return e;
    const std::string& data = state_->files[slot].data;
    if (offset >= data.size()) return e;
    *bytes_read = static_cast<size_t>(std::min<uint64_t>(n, data.size() - offset));
    std::memcpy(dst, data.data() + offset, *bytes_read);
    return e;
  }

  HandleError write(size_t slot, uint64_t offset, std::string_view bytes) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    HandleError e = enter(FakeSlotDisk::Op::Write, slot);
    if (!e.ok()) return e;
    FakeSlotDisk::File& f = state_->files[slot];
    e = check_growth(f.data.size(), std::max<uint64_t>(f.data.size(), offset + bytes.size()));
    if (!e.ok()) return e;
    apply_write(&f.data, offset, bytes);
    f.pending.push_back({false, offset, std::string(bytes)});
    return e;
  }

  HandleError truncate(size_t slot, uint64_t size) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    HandleError e = enter(FakeSlotDisk::Op::Truncate, slot);
    if (!e.ok()) return e;
    FakeSlotDisk::File& f = state_->files[slot];
    e = check_growth(f.data.size(), size);
    if (!e.ok()) return e;
    f.data.resize(static_cast<size_t>(size), '\0');
    f.pending.push_back({true, size, {}});
    return e;
  }

  HandleError size(size_t slot, uint64_t* size) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    *size = 0;
    HandleError e = enter(FakeSlotDisk::Op::Size, slot);
    if (e.ok()) *size = state_->files[slot].data.size();
    return e;
  }

  HandleError flush(size_t slot) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    HandleError e = enter(FakeSlotDisk::Op::Flush, slot);
    if (!e.ok()) return e;
    FakeSlotDisk::File& f = state_->files[slot];
    f.durable = f.data;
    f.pending.clear();
    return e;
  }

 private:
  // Counts the call; fails it if the table is stale, the slot unknown or a fault fires.
  // REQUIRES: state_->mu held.
  HandleError enter(FakeSlotDisk::Op op, size_t slot) {
    FakeSlotDisk::State& st = *state_;
    ++st.calls[static_cast<size_t>(op)];
    if (st.epoch != epoch_) {
      return HandleError::make("InvalidStateError", "the access handle is closed");
    }
    if (slot >= st.files.size()) {
      return HandleError::make("NotFoundError", "no slot " + std::to_string(slot));
    }
    HandleError result;
    for (size_t i = 0; i < st.faults.size(); ++i) {
      const FakeSlotDisk::Fault& f = st.faults[i];
      if (f.op != op || (f.slot >= 0 && static_cast<size_t>(f.slot) != slot)) continue;
      const uint64_t k = ++st.seen[i];
      if (result.ok() && k >= f.nth && st.fired[i] < f.times) {
        ++st.fired[i];
        result = HandleError::make(f.error_name, "injected fault");
      }
    }
    return result;
  }

  HandleError check_growth(uint64_t old_size, uint64_t new_size) const {
    const FakeSlotDisk::State& st = *state_;
    if (st.quota == FakeSlotDisk::kNoQuota || new_size <= old_size) return HandleError();
    uint64_t total = 0;
    for (const auto& f : st.files) total += f.data.size();
    if (total + (new_size - old_size) > st.quota) {
      return HandleError::make("QuotaExceededError", "the origin's storage quota is used up");
    }
    return HandleError();
  }

  std::shared_ptr<FakeSlotDisk::State> state_;
  const uint64_t epoch_;
};

FakeSlotDisk::FakeSlotDisk(size_t slots) : state_(std::make_shared<State>()) {
  state_->files.resize(slots);
}

FakeSlotDisk::~FakeSlotDisk() = default;

std::shared_ptr<SlotHandles> FakeSlotDisk::handles() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return std::make_shared<FakeSlotTable>(state_, state_->epoch);
}

void FakeSlotDisk::add_slots(size_t n) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->files.resize(state_->files.size() + n);
}

size_t FakeSlotDisk::slot_count() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->files.size();
}

void FakeSlotDisk::crash(const CrashOptions& options) {
  std::lock_guard<std::mutex> lock(state_->mu);
  uint64_t rng = options.seed;
  for (File& f : state_->files) {
    std::string data = f.durable;
    const size_t n = f.pending.size();
    // Prefix: the first `keep` calls land. Reorder: each call lands or not on its own.
    const size_t keep = options.lose_all ? 0 : static_cast<size_t>(splitmix64_next(&rng) % (n + 1));
    bool torn_one = false;
    for (size_t i = 0; i < n; ++i) {
      const Pending& p = f.pending[i];
      const bool lands =
          options.reorder && !options.lose_all ? (splitmix64_next(&rng) & 1) != 0 : i < keep;
      if (lands) {
        if (p.truncate) {
          data.resize(static_cast<size_t>(p.offset), '\0');
        } else {
          apply_write(&data, p.offset, p.bytes);
        }
        continue;
      }
      // A prefix crash tears the one call in flight; a reordering one may tear any it drops.
      const bool tears = options.reorder ? (splitmix64_next(&rng) & 1) != 0 : !torn_one;
      if (options.tear && tears && !p.truncate && !p.bytes.empty()) {
        torn_one = true;
        // Half the tears stop within the first 64 bytes, where a header keeps its fields.
        const uint64_t span = (splitmix64_next(&rng) & 1) != 0
                                  ? p.bytes.size()
                                  : std::min<uint64_t>(p.bytes.size(), 64);
        const size_t part = static_cast<size_t>(splitmix64_next(&rng) % span);
        apply_write(&data, p.offset, std::string_view(p.bytes).substr(0, part));
      }
      if (!options.reorder) break;
    }
    f.data = data;
    f.durable = std::move(data);
    f.pending.clear();
  }
  ++state_->epoch;
}

void FakeSlotDisk::terminate() {
  std::lock_guard<std::mutex> lock(state_->mu);
  ++state_->epoch;
}

void FakeSlotDisk::inject(Fault fault) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->faults.push_back(std::move(fault));
  state_->seen.push_back(0);
  state_->fired.push_back(0);
}

void FakeSlotDisk::clear_faults() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->faults.clear();
  state_->seen.clear();
  state_->fired.clear();
}

void FakeSlotDisk::set_quota(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->quota = bytes;
}

uint64_t FakeSlotDisk::calls(Op op) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->calls[static_cast<size_t>(op)];
}

size_t FakeSlotDisk::pending_calls(size_t slot) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return slot < state_->files.size() ? state_->files[slot].pending.size() : 0;
}

std::string FakeSlotDisk::bytes(size_t slot) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return slot < state_->files.size() ? state_->files[slot].data : std::string();
}

std::string FakeSlotDisk::durable_bytes(size_t slot) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return slot < state_->files.size() ? state_->files[slot].durable : std::string();
}

uint64_t FakeSlotDisk::total_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  uint64_t total = 0;
  for (const File& f : state_->files) total += f.data.size();
  return total;
}

void FakeSlotDisk::overwrite(size_t slot, uint64_t offset, std::string_view bytes) {
  std::lock_guard<std::mutex> lock(state_->mu);
  assert(slot < state_->files.size());
  File& f = state_->files[slot];
  apply_write(&f.data, offset, bytes);
  apply_write(&f.durable, offset, bytes);
}

void FakeSlotDisk::flip(size_t slot, uint64_t offset, uint8_t mask) {
  std::lock_guard<std::mutex> lock(state_->mu);
  assert(slot < state_->files.size());
  File& f = state_->files[slot];
  assert(offset < f.data.size());
  f.data[offset] = static_cast<char>(f.data[offset] ^ mask);
  if (offset < f.durable.size()) f.durable[offset] = static_cast<char>(f.durable[offset] ^ mask);
}

}  // namespace skv
