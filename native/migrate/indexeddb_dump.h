// The IndexedDB dump file: raw key/value pairs exported from a browser's IndexedDB.
//
//   dump   := magic:"INDXDB01" count:u32be record{count}
//   record := key_len:u32be key value_len:u32be value
//
// Nothing follows the last record. There is no checksum, so a reader checks what it can: the
// magic, every length against the bytes left, the count against the records present, and no
// trailing bytes. The records need not be sorted; a key that appears twice is refused (the
// file cannot say which value is meant).
//
// Thread safety: pure functions.

#ifndef SKV_NATIVE_MIGRATE_INDEXEDDB_DUMP_H_
#define SKV_NATIVE_MIGRATE_INDEXEDDB_DUMP_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace skv::migration {

inline constexpr std::string_view kIndexedDbDumpMagic = "INDXDB01";
// In a directory, the dump is this file.
inline constexpr std::string_view kIndexedDbDumpFileName = "indxdb_dump.bin";

}  // namespace skv::migration

#endif  // SKV_NATIVE_MIGRATE_INDEXEDDB_DUMP_H_
