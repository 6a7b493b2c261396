// `skv enc-info <dir>`: how each file of a database is sealed, read from the plaintext parts only
// (CURRENT's seal line and the 64-byte file headers, docs/encryption.md), with no key. Unlike the
// other commands it reads the on-disk formats directly (format/file_header.h,
// format/file_names.h, crypto/sealed_pointer.h) and never opens the tree, so it works on a
// database whose key is lost, and takes no lock.
//
// Output, one line each, fields separated by spaces:
//   CURRENT sealed key_id=<id> cipher=<name> db=<hex32> manifest=<name>
//   CURRENT plain manifest=<name>
//   <file name> kind=<kind> number=<n> size=<bytes> cipher=<name> key_id=<id> db=<hex32>
//   <file name> kind=<kind> number=<n> size=<bytes> error=<code>: <message>

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

// The first line of output: CURRENT's seal, or the error that reading it gives.
std::string current_line(const fs::path& path) {
  Result<std::string> contents = read_prefix(path, kMaxCurrentSize + 1);
  if (!contents.ok()) return "CURRENT error=" + contents.status().to_string();
  if (contents->size() > kMaxCurrentSize) {
    return "CURRENT error=corruption: " + path.string() + ": longer than " +
           std::to_string(kMaxCurrentSize) + " bytes";
  }
  std::string_view first_line;
  std::optional<crypto::PointerSeal> seal;
  const Status s = crypto::split_pointer(*contents, path.string(), &first_line, &seal);
  if (!s.ok()) return "CURRENT error=" + s.to_string();
  if (!first_line.empty() && first_line.back() == '\n') first_line.remove_suffix(1);
  const std::string manifest = "manifest=" + escape(first_line);
  if (!seal) return "CURRENT plain " + manifest;
  return "CURRENT sealed key_id=" + std::to_string(seal->key_id) +
         " cipher=" + cipher_name(seal->suite) +
         " db=" + hex(seal->db_id.data(), seal->db_id.size()) + " " + manifest;
}

// The envelope of one file's header, or the error decoding it gives.
std::string header_fields(const fs::path& path, FileType type) {
  Result<std::string> bytes = read_prefix(path, kFileHeaderSize);
  if (!bytes.ok()) return "error=" + bytes.status().to_string();
  if (bytes->empty()) return "header=none (empty file)";
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
        return "header=none";
      }
      kind = static_cast<FileKind>(byte);
      break;
    }
  }
  Result<FileHeader> h = decode_file_header(*bytes, kind, path.string());
  if (!h.ok()) return "error=" + h.status().to_string();
  return "cipher=" + cipher_label(h->cipher) + " key_id=" + std::to_string(h->key_id) +
         " db=" + hex(h->db_id.data(), h->db_id.size());
}

}  // namespace

int run_enc_info(const std::string& dir) {
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

  std::printf("%s\n", current_line(root / current_file_name()).c_str());
  for (const Entry& e : entries) {
    const fs::path path = root / e.name;
    const uintmax_t size = fs::file_size(path, ec);
    const std::string size_text = ec ? "?" : std::to_string(size);
    std::printf("%s kind=%s number=%" PRIu64 " size=%s %s\n", e.name.c_str(), type_name(e.type),
                e.number, size_text.c_str(), header_fields(path, e.type).c_str());
  }
  return 0;
}

}  // namespace skv::cli
