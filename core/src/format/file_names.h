// The names of the files in a database: WAL segments, SSTables, value logs, manifests, the
// current-manifest pointer and temporary files.
//
//   wal segment   := number ".wal"         e.g. 000123.wal
//   sstable       := number ".sst"         e.g. 000123.sst
//   value log     := number ".vlog"        e.g. 000123.vlog
//   manifest      := "MANIFEST-" number    e.g. MANIFEST-000123
//   temporary     := number ".tmp"         e.g. 000123.tmp
//   current       := "CURRENT"
//   number        := decimal, zero padded to at least 6 digits
//
// Every file number is allocated once per database, so a number names one file whatever its type.
//
// Thread safety: pure functions.

#ifndef SKV_FORMAT_FILE_NAMES_H_
#define SKV_FORMAT_FILE_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace skv {

enum class FileType { Wal, Table, ValueLog, Manifest, Current, Temp, Unknown };

// "000123.wal".
std::string wal_file_name(uint64_t number);
// "MANIFEST-000123".
std::string manifest_file_name(uint64_t number);
// "000123.sst".
std::string table_file_name(uint64_t number);
// "000123.vlog".
std::string vlog_file_name(uint64_t number);
// "000123.tmp".
std::string temp_file_name(uint64_t number);
// "CURRENT".
std::string current_file_name();

// Recognizes a name produced by one of the functions above. Only the canonical spelling is
// accepted (the padding those functions produce, no sign, no extra zeros), so one number never
// has two names of the same type. On success sets *type and *number (0 for CURRENT) and returns
// true; otherwise sets *type to Unknown and returns false.
// File numbers stay below this bound (2^56), so that incrementing the next number can never wrap
// around to numbers of existing files. A name or a manifest field beyond it is not ours / corrupt.
constexpr uint64_t kMaxFileNumber = uint64_t{1} << 56;

bool parse_file_name(std::string_view name, FileType* type, uint64_t* number);

}  // namespace skv

#endif  // SKV_FORMAT_FILE_NAMES_H_
