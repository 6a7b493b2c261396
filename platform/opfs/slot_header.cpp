#include "platform/opfs/slot_header.h"

#include <algorithm>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace skv {

namespace {

constexpr char kMagic[8] = {'S', 'K', 'V', 'S', 'L', 'O', 'T', '1'};
constexpr size_t kCrcOffset = 8;
constexpr size_t kCoveredOffset = 12;  // the checksum covers [12, end of payload)

void put_u16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v & 0xff);
  p[1] = static_cast<char>(v >> 8);
}
uint16_t get_u16(const char* p) {
  return static_cast<uint16_t>(static_cast<unsigned char>(p[0]) |
                               (static_cast<unsigned char>(p[1]) << 8));
}

bool all_zero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

SlotHeaderCopy damaged(std::string problem) {
  SlotHeaderCopy c;
  c.state = SlotHeaderCopy::State::Damaged;
  c.problem = std::move(problem);
  return c;
}

}  // namespace

const char* slot_kind_name(SlotKind kind) {
  switch (kind) {
    case SlotKind::None:
      return "none";
    case SlotKind::Log:
      return "log";
    case SlotKind::Object:
      return "object";
    case SlotKind::Pointer:
      return "pointer";
  }
  return "unknown";
}

bool valid_slot_header(const SlotHeader& h) {
  if (!h.used) return h.kind == SlotKind::None && h.name.empty() && h.payload.empty();
  if (h.kind == SlotKind::None || h.name.empty() || h.name.size() > kSlotMaxNameBytes) {
    return false;
  }
  if (h.kind == SlotKind::Pointer) return h.payload.size() <= kSlotMaxPointerBytes;
  return h.payload.empty();
}

std::string encode_slot_header(const SlotHeader& h) {
  std::string out(kSlotHeaderCopySize, '\0');
  char* p = out.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  put_u16(p + 12, kSlotFormatVersion);
  p[14] = static_cast<char>(h.used ? 1 : 0);
  p[15] = static_cast<char>(h.kind);
  encode_fixed64(p + 16, h.generation);
  put_u16(p + 24, static_cast<uint16_t>(h.name.size()));
  put_u16(p + 26, static_cast<uint16_t>(h.payload.size()));
  // p[28..32) reserved, zero.
  std::memcpy(p + kSlotHeaderFixedSize, h.name.data(), h.name.size());
  std::memcpy(p + kSlotHeaderFixedSize + h.name.size(), h.payload.data(), h.payload.size());
  const size_t end = kSlotHeaderFixedSize + h.name.size() + h.payload.size();
  encode_fixed32(p + kCrcOffset,
                 crc32c::mask(crc32c::value(p + kCoveredOffset, end - kCoveredOffset)));
  return out;
}

SlotHeaderCopy decode_slot_header_copy(std::string_view bytes) {
  std::string copy(kSlotHeaderCopySize, '\0');
  // (An empty view may have no data pointer at all, which memcpy must never be given.)
  if (!bytes.empty()) {
    std::memcpy(copy.data(), bytes.data(), std::min(bytes.size(), kSlotHeaderCopySize));
  }
  if (all_zero(copy)) return SlotHeaderCopy();  // never written
  const char* p = copy.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) return damaged("bad magic");
  const size_t name_len = get_u16(p + 24);
  const size_t payload_len = get_u16(p + 26);
  if (name_len > kSlotMaxNameBytes || payload_len > kSlotMaxPointerBytes) {
    return damaged("length out of range");
  }
  const size_t end = kSlotHeaderFixedSize + name_len + payload_len;
  const uint32_t want = crc32c::unmask(decode_fixed32(p + kCrcOffset));
  if (crc32c::value(p + kCoveredOffset, end - kCoveredOffset) != want) {
    return damaged("checksum mismatch");
  }
  const uint16_t version = get_u16(p + 12);
  if (version != kSlotFormatVersion) {
    return damaged("unsupported header version " + std::to_string(version));
  }
  const auto state = static_cast<unsigned char>(p[14]);
  const auto kind = static_cast<unsigned char>(p[15]);
  if (state > 1 || kind > static_cast<unsigned char>(SlotKind::Pointer)) {
    return damaged("unknown state or kind");
  }
  SlotHeaderCopy c;
  c.state = SlotHeaderCopy::State::Valid;
  c.header.used = state == 1;
  c.header.kind = static_cast<SlotKind>(kind);
  c.header.generation = decode_fixed64(p + 16);
  c.header.name.assign(p + kSlotHeaderFixedSize, name_len);
  c.header.payload.assign(p + kSlotHeaderFixedSize + name_len, payload_len);
  if (!valid_slot_header(c.header)) return damaged("inconsistent fields");
  return c;
}

SlotHeaderRead read_slot_header(std::string_view area) {
  SlotHeaderCopy copies[2];
  for (size_t i = 0; i < 2; ++i) {
    const size_t start = i * kSlotHeaderCopySize;
    std::string_view part =
        area.size() > start ? area.substr(start, kSlotHeaderCopySize) : std::string_view();
    copies[i] = decode_slot_header_copy(part);
  }
  SlotHeaderRead r;
  int best = -1;
  for (int i = 0; i < 2; ++i) {
    if (copies[i].state != SlotHeaderCopy::State::Valid) continue;
    r.max_generation = std::max(r.max_generation, copies[i].header.generation);
    if (best < 0 || copies[i].header.generation > copies[best].header.generation) best = i;
  }
  if (best >= 0) {
    r.outcome = SlotHeaderRead::Outcome::Valid;
    r.header = std::move(copies[best].header);
    r.copy = best;
    r.other_damaged = copies[1 - best].state == SlotHeaderCopy::State::Damaged;
    return r;
  }
  if (copies[0].state == SlotHeaderCopy::State::Blank ||
      copies[1].state == SlotHeaderCopy::State::Blank) {
    return r;  // Blank: at most a torn first write
  }
  r.outcome = SlotHeaderRead::Outcome::Damaged;
  r.problem = "copy 0: " + copies[0].problem + "; copy 1: " + copies[1].problem;
  return r;
}

}  // namespace skv
