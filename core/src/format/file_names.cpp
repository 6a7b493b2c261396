#include "format/file_names.h"

#include <cstdio>

namespace skv {

namespace {

constexpr std::string_view kManifestPrefix = "MANIFEST-";
constexpr std::string_view kCurrent = "CURRENT";

std::string padded_number(uint64_t number) {
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), "%06llu", static_cast<unsigned long long>(number));
  return std::string(buf, static_cast<size_t>(n));
}

// Parses a canonical padded number that makes up the whole of `digits`.
bool parse_number(std::string_view digits, uint64_t* number) {
  if (digits.empty() || digits.size() > 20) return false;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;  // overflow
    v = v * 10 + d;
  }
  if (padded_number(v) != digits) return false;  // not the canonical spelling
  if (v >= kMaxFileNumber) return false;
  *number = v;
  return true;
}

bool parse_suffixed(std::string_view name, std::string_view suffix, uint64_t* number) {
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
    return false;
  }
  return parse_number(name.substr(0, name.size() - suffix.size()), number);
}

}  // namespace

std::string wal_file_name(uint64_t number) { return padded_number(number) + ".wal"; }

std::string manifest_file_name(uint64_t number) {
  return std::string(kManifestPrefix) + padded_number(number);
}

std::string table_file_name(uint64_t number) { return padded_number(number) + ".sst"; }

std::string vlog_file_name(uint64_t number) { return padded_number(number) + ".vlog"; }

std::string temp_file_name(uint64_t number) { return padded_number(number) + ".tmp"; }

std::string current_file_name() { return std::string(kCurrent); }

bool parse_file_name(std::string_view name, FileType* type, uint64_t* number) {
  uint64_t n = 0;
  FileType t = FileType::Unknown;
  if (name == kCurrent) {
    t = FileType::Current;
  } else if (name.substr(0, kManifestPrefix.size()) == kManifestPrefix) {
    if (parse_number(name.substr(kManifestPrefix.size()), &n)) t = FileType::Manifest;
  } else if (parse_suffixed(name, ".wal", &n)) {
    t = FileType::Wal;
  } else if (parse_suffixed(name, ".sst", &n)) {
    t = FileType::Table;
  } else if (parse_suffixed(name, ".vlog", &n)) {
    t = FileType::ValueLog;
  } else if (parse_suffixed(name, ".tmp", &n)) {
    t = FileType::Temp;
  }
  *type = t;
  if (t == FileType::Unknown) return false;
  *number = n;
  return true;
}

}  // namespace skv
