// The slot header: what each OPFS slot file says about the logical file it holds.
//
// A slot file starts with a 4 KiB header area holding two copies of the header, then the data:
//
//   slot file   := copy0 (2048 bytes) copy1 (2048 bytes) data*
//   copy        := magic "SKVSLOT1" (8)  crc (4)  version u16 (=1)  state u8  kind u8
//                  generation u64  name_len u16  payload_len u16  reserved u32 (=0)
//                  name (name_len)  payload (payload_len)  zero padding to 2048
//
// Integers are little-endian. crc is the masked CRC32C (util/crc32c.h) of the bytes from the
// version field to the end of the payload. state is 0 (free) or 1 (used); kind is 0 (none, for a
// free slot), 1 (log file), 2 (object) or 3 (pointer record). A used slot names its file
// (1..255 bytes); only a pointer record has a payload (its contents, at most 1024 bytes).
// The generation is unique across the pool and grows with every header written, so of two
// headers the higher generation is the newer one.
//
// Two copies make a header rewrite safe without a rename: a new header is written to the copy
// that does not hold the last flushed header, so a write torn by a crash damages only a copy
// that was never durable; once it is durable the pool repeats it in the other copy, so damage to
// one copy falls back to the same state. Reading takes the valid copy with the higher generation. A
// copy of all zeros was never written. A slot whose copies are both damaged (neither valid nor all
// zeros) is damaged: the pool reports it as corruption and never reuses it on its own.
//
// Thread safety: pure functions over values.

#ifndef SKV_PLATFORM_OPFS_SLOT_HEADER_H_
#define SKV_PLATFORM_OPFS_SLOT_HEADER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skv {

constexpr uint64_t kSlotHeaderArea = 4096;    // data starts here
constexpr size_t kSlotHeaderCopySize = 2048;  // bytes of one copy; copy i starts at i * this
constexpr size_t kSlotHeaderFixedSize = 32;   // the fixed fields before the name
constexpr size_t kSlotMaxNameBytes = 255;
constexpr size_t kSlotMaxPointerBytes = 1024;
constexpr uint16_t kSlotFormatVersion = 1;

enum class SlotKind : uint8_t { None = 0, Log = 1, Object = 2, Pointer = 3 };

// "none", "log", "object", "pointer".
const char* slot_kind_name(SlotKind kind);

struct SlotHeader {
  bool used = false;
  SlotKind kind = SlotKind::None;
  uint64_t generation = 0;
  std::string name;     // empty for a free slot
  std::string payload;  // pointer records only
};

// Encodes `h` as one copy of exactly kSlotHeaderCopySize bytes.
// REQUIRES: valid_slot_header(h).
std::string encode_slot_header(const SlotHeader& h);

// True if `h` can be encoded: a free header has kind None, no name and no payload; a used one has
// a kind, a name of 1..kSlotMaxNameBytes bytes and a payload only if it is a pointer record (at
// most kSlotMaxPointerBytes).
bool valid_slot_header(const SlotHeader& h);

// One copy as read back.
struct SlotHeaderCopy {
  enum class State { Blank, Valid, Damaged };
  State state = State::Blank;
  SlotHeader header;    // when Valid
  std::string problem;  // when Damaged: what check failed
};

// Decodes one copy. `bytes` may be shorter than a copy (a short file): the missing bytes count
// as zeros.
SlotHeaderCopy decode_slot_header_copy(std::string_view bytes);

// The header of a slot, from both copies.
struct SlotHeaderRead {
  enum class Outcome { Blank, Valid, Damaged };
  Outcome outcome = Outcome::Blank;
  SlotHeader header;            // when Valid: the newer valid copy
  int copy = -1;                // when Valid: which copy holds it (0 or 1)
  bool other_damaged = false;   // when Valid: the other copy fails its checks (a torn rewrite)
  std::string problem;          // when Damaged: both copies' problems
  uint64_t max_generation = 0;  // highest generation of any valid copy
};

// Reads a slot's header from the first bytes of its file (up to kSlotHeaderArea; fewer if the
// file is shorter). Blank: no copy was ever written (both all zeros, or one all zeros and the
// other damaged by a torn first write). Valid: at least one copy is valid. Damaged: neither copy
// is valid and neither is all zeros.
SlotHeaderRead read_slot_header(std::string_view area);

}  // namespace skv

#endif  // SKV_PLATFORM_OPFS_SLOT_HEADER_H_
