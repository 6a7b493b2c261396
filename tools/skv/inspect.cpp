// `skv inspect <dir>` (alias `stats`): what the database holds, read from its files through a
// read-only open: the format version, versioning and encryption as stored, the tables per level,
// the value logs, the WAL segments and the manifest with their sizes, and the entry counts (a
// key count estimate). Nothing is a counter of this process.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include "commands.h"
#include "crypto/sealed_pointer.h"
#include "escape.h"
#include "format/file_names.h"
#include "session.h"
#include "skv/skv.h"
#include "skv/version.h"

namespace skv::cli {

namespace {

namespace fs = std::filesystem;

struct OnDisk {
  uint64_t wal_files = 0, wal_bytes = 0;
  std::string manifest;  // the file CURRENT names
  uint64_t manifest_bytes = 0;
  std::string encryption = "off";  // or "<cipher>, key id N"
  std::string cipher;              // empty for a plaintext database
  uint32_t key_id = 0;
};

// What the directory says beside the tree: WAL sizes, the manifest CURRENT names and its seal.
OnDisk read_directory(const std::string& dir) {
  OnDisk d;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(it->path().filename().string(), &type, &number)) continue;
    if (type != FileType::Wal) continue;
    ++d.wal_files;
    d.wal_bytes += it->file_size(ec);
  }
  std::ifstream in(fs::path(dir) / current_file_name(), std::ios::binary);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string_view first_line;
  std::optional<crypto::PointerSeal> seal;
  if (crypto::split_pointer(contents, dir, &first_line, &seal).ok()) {
    if (!first_line.empty() && first_line.back() == '\n') first_line.remove_suffix(1);
    d.manifest = std::string(first_line);
    d.manifest_bytes = fs::file_size(fs::path(dir) / d.manifest, ec);
    if (ec) d.manifest_bytes = 0;
    if (seal) {
      d.cipher = cipher_name(seal->suite);
      d.key_id = seal->key_id;
      d.encryption = d.cipher + ", key id " + std::to_string(d.key_id);
    }
  }
  return d;
}

}  // namespace

int run_inspect(std::string_view command, const Database& db, const OutputOptions& out) {
  return with_tree(command, db, OpenMode{.read_only = true}, [&](Session& session) -> Status {
    const TreeStats st = session.tree().stats();
    const Versioning versioning = session.tree().versioning();
    const OnDisk d = read_directory(db.dir);
    const int levels = std::clamp(st.level_count, 0, 16);
    uint64_t table_files = 0, table_bytes = 0;
    for (int level = 0; level < levels; ++level) {
      table_files += static_cast<uint64_t>(st.files_per_level[level]);
      table_bytes += st.bytes_per_level[level];
    }
    if (out.json) {
      std::string levels_json;
      for (int level = 0; level < levels; ++level) {
        if (level > 0) levels_json += ",";
        levels_json += "{\"files\":" + std::to_string(st.files_per_level[level]) +
                       ",\"bytes\":" + std::to_string(st.bytes_per_level[level]) + "}";
      }
      std::string line = "{" + json_field("path", db.dir, false) +
                         ",\"format_version\":" + std::to_string(kFormatVersion) +
                         ",\"versioned\":" + (versioning.enabled ? "true" : "false") +
                         ",\"retention_ns\":" + std::to_string(versioning.retention_ns) +
                         ",\"encrypted\":" + (d.cipher.empty() ? "false" : "true");
      if (!d.cipher.empty()) {
        line +=
            "," + json_field("cipher", d.cipher, false) + ",\"key_id\":" + std::to_string(d.key_id);
      }
      line += ",\"last_sequence\":" + std::to_string(st.last_sequence) +
              ",\"table_files\":" + std::to_string(table_files) +
              ",\"table_bytes\":" + std::to_string(table_bytes) +
              ",\"table_entries\":" + std::to_string(st.table_entries) +
              ",\"memtable_entries\":" + std::to_string(st.memtable_entries) +
              ",\"vlog_files\":" + std::to_string(st.vlog_files) +
              ",\"vlog_bytes\":" + std::to_string(st.vlog_bytes) +
              ",\"vlog_garbage_bytes\":" + std::to_string(st.vlog_garbage_bytes) +
              ",\"wal_files\":" + std::to_string(d.wal_files) +
              ",\"wal_bytes\":" + std::to_string(d.wal_bytes) + "," +
              json_field("manifest", d.manifest, false) +
              ",\"manifest_bytes\":" + std::to_string(d.manifest_bytes) + ",\"levels\":[" +
              levels_json + "]}";
      std::printf("%s\n", line.c_str());
      return Status::OK();
    }
    std::printf("path                 %s\n", escape(db.dir).c_str());
    std::printf("format_version       %u\n", static_cast<unsigned>(kFormatVersion));
    if (versioning.enabled) {
      // retention_ns 0 keeps every version.
      std::printf("versioning           on, retention_ns %" PRIu64 "\n", versioning.retention_ns);
    } else {
      std::printf("versioning           off\n");
    }
    std::printf("encryption           %s\n", d.encryption.c_str());
    std::printf("last_sequence        %" PRIu64 "\n", st.last_sequence);
    // Entries, versions and deletes included: with neither, about the number of keys.
    std::printf("table_entries        %" PRIu64 "\n", st.table_entries);
    std::printf("memtable_entries     %" PRIu64 "\n", st.memtable_entries);
    std::printf("table_files          %" PRIu64 "\n", table_files);
    std::printf("table_bytes          %" PRIu64 "\n", table_bytes);
    std::printf("vlog_files           %" PRIu64 "\n", st.vlog_files);
    std::printf("vlog_bytes           %" PRIu64 "\n", st.vlog_bytes);
    std::printf("vlog_garbage_bytes   %" PRIu64 "\n", st.vlog_garbage_bytes);
    std::printf("wal_files            %" PRIu64 "\n", d.wal_files);
    std::printf("wal_bytes            %" PRIu64 "\n", d.wal_bytes);
    std::printf("manifest             %s\n", escape(d.manifest).c_str());
    std::printf("manifest_bytes       %" PRIu64 "\n", d.manifest_bytes);
    std::printf("level_count          %d\n", st.level_count);
    for (int level = 0; level < levels; ++level) {
      std::printf("L%-2d files %-6d bytes %" PRIu64 "\n", level, st.files_per_level[level],
                  st.bytes_per_level[level]);
    }
    return Status::OK();
  });
}

}  // namespace skv::cli
