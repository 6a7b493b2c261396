// `skv enc-info <dir>`: how each file of a database is sealed, read from the plaintext parts only
// (CURRENT's seal line and the 64-byte file headers, docs/encryption.md), with no key. Unlike the
// other commands it reads the on-disk formats directly (format/file_header.h,
// format/file_names.h, crypto/sealed_pointer.h) and never opens the tree, so it works on a
// database whose key is lost, and takes no lock.
//
// Text output, one line each, fields separated by spaces:
//   CURRENT sealed key_id=<id> cipher=<name> db=<hex32> manifest=<name>
//   CURRENT plain manifest=<name>
//   <file name> kind=<kind> number=<n> size=<bytes> cipher=<name> key_id=<id> db=<hex32>
//   <file name> kind=<kind> number=<n> size=<bytes> error=<code>: <message>
// With --json, one object: {"current": {"sealed", "key_id", "cipher", "db", "manifest"} (or
// {"error"}), "files": [{"name", "kind", "number", "size", "cipher", "key_id", "db"} (or "error",
// or "header": null for a file without one)]}.

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "commands.h"
#include "crypto/sealed_pointer.h"
#include "escape.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "session.h"
#include "skv/encryption.h"
#include "skv/status.h"

namespace skv::cli {

namespace {

namespace fs = std::filesystem;

// CURRENT is a line or two; anything much longer is not ours.
constexpr size_t kMaxCurrentSize = 4096;

std::string hex(const uint8_t* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

// The cipher byte of a header as a name: "none" for 0.
std::string cipher_label(uint8_t cipher) {
  if (cipher == 0) return "none";
  if (cipher == static_cast<uint8_t>(CipherSuite::XChaCha20Poly1305) ||
      cipher == static_cast<uint8_t>(CipherSuite::Aes256Gcm)) {
    return cipher_name(static_cast<CipherSuite>(cipher));
  }
  return "unknown(" + std::to_string(cipher) + ")";
}

const char* type_name(FileType type) {
  switch (type) {
    case FileType::Wal:
      return "wal";
    case FileType::Table:
      return "table";
    case FileType::ValueLog:
      return "vlog";
    case FileType::Manifest:
      return "manifest";
    case FileType::Current:
      return "current";
    case FileType::Temp:
      return "temp";
    case FileType::Unknown:
      break;
  }
  return "unknown";
}

// Reads at most `limit` bytes from the start of `path`. IO naming the file on failure.
Result<std::string> read_prefix(const fs::path& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error(path.string() + ": cannot be opened for reading");
  std::string bytes(limit, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(limit));
  if (in.bad()) return Status::io_error(path.string() + ": read failed");
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

// What CURRENT says about the seal: its fields, or the error reading it gives.
struct CurrentInfo {
  std::string error;  // "<code>: <message>"; empty when read
  bool sealed = false;
  uint32_t key_id = 0;
  std::string cipher;
  std::string db;  // hex
  std::string manifest;
};

CurrentInfo read_current(const fs::path& path) {
  CurrentInfo info;
  Result<std::string> contents = read_prefix(path, kMaxCurrentSize + 1);
  if (!contents.ok()) {
    info.error = contents.status().to_string();
    return info;
  }
  if (contents->size() > kMaxCurrentSize) {
    info.error = "corruption: " + path.string() + ": longer than " +
                 std::to_string(kMaxCurrentSize) + " bytes";
    return info;
  }
  std::string_view first_line;
  std::optional<crypto::PointerSeal> seal;
  const Status s = crypto::split_pointer(*contents, path.string(), &first_line, &seal);
  if (!s.ok()) {
    info.error = s.to_string();
    return info;
  }
  if (!first_line.empty() && first_line.back() == '\n') first_line.remove_suffix(1);
  info.manifest = std::string(first_line);
  if (seal) {
    info.sealed = true;
    info.key_id = seal->key_id;
    info.cipher = cipher_name(seal->suite);
    info.db = hex(seal->db_id.data(), seal->db_id.size());
  }
  return info;
}

// The envelope of one file's header: its fields, that it has none, or the error decoding gives.
struct HeaderInfo {
  std::string error;  // "<code>: <message>"
  std::string none;   // why there is no header ("empty file", or "" when the bytes are not one)
  bool has_header = false;
  std::string cipher;
  uint32_t key_id = 0;
  std::string db;  // hex
};

HeaderInfo read_header(const fs::path& path, FileType type) {
  HeaderInfo info;
  Result<std::string> bytes = read_prefix(path, kFileHeaderSize);
  if (!bytes.ok()) {
    info.error = bytes.status().to_string();
    return info;
  }
  if (bytes->empty()) {
    info.none = "empty file";
    return info;
  }
  FileKind kind;
  switch (type) {
    case FileType::Wal:
      kind = FileKind::Wal;
      break;
    case FileType::Table:
      kind = FileKind::Table;
      break;
    case FileType::ValueLog:
      kind = FileKind::ValueLog;
      break;
    case FileType::Manifest:
      kind = FileKind::Manifest;
      break;
    default: {
      // A temporary file: a file being written under its final kind, or CURRENT's next
      // contents. Its header, if it has one, says which.
      const auto byte = bytes->size() > 6 ? static_cast<uint8_t>((*bytes)[6]) : 0;
      if (bytes->size() < kFileHeaderSize || bytes->compare(0, 4, "SKV1") != 0 || byte < 1 ||
          byte > 4) {
        return info;
      }
      kind = static_cast<FileKind>(byte);
      break;
    }
  }
  Result<FileHeader> h = decode_file_header(*bytes, kind, path.string());
  if (!h.ok()) {
    info.error = h.status().to_string();
    return info;
  }
  info.has_header = true;
  info.cipher = cipher_label(h->cipher);
  info.key_id = h->key_id;
  info.db = hex(h->db_id.data(), h->db_id.size());
  return info;
}

std::string current_text(const CurrentInfo& c) {
  if (!c.error.empty()) return "CURRENT error=" + c.error;
  const std::string manifest = "manifest=" + escape(c.manifest);
  if (!c.sealed) return "CURRENT plain " + manifest;
  return "CURRENT sealed key_id=" + std::to_string(c.key_id) + " cipher=" + c.cipher +
         " db=" + c.db + " " + manifest;
}

std::string current_json(const CurrentInfo& c) {
  if (!c.error.empty()) return "{" + json_field("error", c.error, false) + "}";
  std::string out = "{\"sealed\":" + std::string(c.sealed ? "true" : "false");
  if (c.sealed) {
    out += ",\"key_id\":" + std::to_string(c.key_id) + "," + json_field("cipher", c.cipher, false) +
           "," + json_field("db", c.db, false);
  }
  return out + "," + json_field("manifest", c.manifest, false) + "}";
}

std::string header_text(const HeaderInfo& h) {
  if (!h.error.empty()) return "error=" + h.error;
  if (!h.has_header) return h.none.empty() ? "header=none" : "header=none (" + h.none + ")";
  return "cipher=" + h.cipher + " key_id=" + std::to_string(h.key_id) + " db=" + h.db;
}

std::string header_json(const HeaderInfo& h) {
  if (!h.error.empty()) return json_field("error", h.error, false);
  if (!h.has_header) return "\"header\":null";
  return json_field("cipher", h.cipher, false) + ",\"key_id\":" + std::to_string(h.key_id) + "," +
         json_field("db", h.db, false);
}

}  // namespace

int run_enc_info(const std::string& dir, const OutputOptions& out) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_regular_file(root / current_file_name(), ec)) {
    print_error("enc-info", Status::not_found(dir + ": not an skv database (it has no " +
                                              current_file_name() + ")"));
    return kExitNotFound;
  }
  struct Entry {
    std::string name;
    FileType type;
    uint64_t number;
  };
  std::vector<Entry> entries;
  fs::directory_iterator it(root, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    Entry e{it->path().filename().string(), FileType::Unknown, 0};
    if (!parse_file_name(e.name, &e.type, &e.number) || e.type == FileType::Current) continue;
    entries.push_back(std::move(e));
  }
  if (ec) {
    print_error("enc-info", Status::io_error(dir + ": cannot be listed: " + ec.message()));
    return kExitFailed;
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });

  const CurrentInfo current = read_current(root / current_file_name());
  std::string files_json;
  if (!out.json) std::printf("%s\n", current_text(current).c_str());
  for (const Entry& e : entries) {
    const fs::path path = root / e.name;
    const uintmax_t size = fs::file_size(path, ec);
    const bool size_known = !ec;
    const HeaderInfo header = read_header(path, e.type);
    if (out.json) {
      files_json += (files_json.empty() ? "" : ",") + std::string("{") +
                    json_field("name", e.name, false) + "," +
                    json_field("kind", type_name(e.type), false) +
                    ",\"number\":" + std::to_string(e.number) +
                    ",\"size\":" + (size_known ? std::to_string(size) : std::string("null")) + "," +
                    header_json(header) + "}";
    } else {
      std::printf("%s kind=%s number=%" PRIu64 " size=%s %s\n", e.name.c_str(), type_name(e.type),
                  e.number, size_known ? std::to_string(size).c_str() : "?",
                  header_text(header).c_str());
    }
  }
  if (out.json) {
    std::printf("{\"current\":%s,\"files\":[%s]}\n", current_json(current).c_str(),
                files_json.c_str());
  }
  return 0;
}

}  // namespace skv::cli
