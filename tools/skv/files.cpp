// `skv sst`, `skv wal` and `skv manifest`: one file (or kind of file) of a database, decoded with
// the engine's own readers (sstable/table.h, wal/log_reader.h, version/version_edit.h). Like
// enc-info they read the formats directly instead of opening a tree, so they show a file as it
// is, also one the manifest no longer names; unlike enc-info they decrypt, with the database's
// key. The directory is opened read-only through the platform (a shared lock, nothing written).

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "crypto/cipher_source.h"
#include "crypto/sealed_pointer.h"
#include "escape.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "format/internal_key.h"
#include "session.h"
#include "skv/skv.h"
#include "sstable/table.h"
#include "util/status_macros.h"
#include "version/version_edit.h"
#include "vlog/value_pointer.h"
#include "wal/log_reader.h"
#include "wal/write_batch.h"

namespace skv::cli {

namespace {

namespace fs = std::filesystem;

// The database directory opened read-only, and its keyring when it is encrypted.
struct Files {
  std::unique_ptr<Storage> storage;
  std::shared_ptr<crypto::Keyring> keyring;  // null: plaintext
  std::string manifest;                      // the name CURRENT gives
};

Result<Files> open_files(const Database& db) {
  Files f;
  StorageOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  options.marker = current_file_name();
  SKV_ASSIGN_OR_RETURN(f.storage, default_platform()->open_storage(db.dir, options));
  SKV_ASSIGN_OR_RETURN(std::string current, f.storage->read_pointer(current_file_name()));
  const std::string label = f.storage->location() + "/" + current_file_name();
  std::string_view first_line;
  std::optional<crypto::PointerSeal> seal;
  SKV_RETURN_IF_ERROR(crypto::split_pointer(current, label, &first_line, &seal));
  f.manifest = std::string(first_line);
  if (!f.manifest.empty() && f.manifest.back() == '\n') f.manifest.pop_back();
  if (!seal) return f;
  if (db.keys.key_file.empty()) {
    return Status::encryption(EncryptionError::NotConfigured,
                              db.dir + ": the database is encrypted (" + cipher_name(seal->suite) +
                                  ") and no key was given");
  }
  SKV_ASSIGN_OR_RETURN(std::shared_ptr<SoftwareKeyManager> keys,
                       SoftwareKeyManager::from_key_file(db.keys.key_file, db.keys.key_id));
  f.keyring = std::make_shared<crypto::Keyring>(keys, seal->suite, seal->db_id);
  SKV_RETURN_IF_ERROR(f.keyring->prepare({seal->key_id}));
  // The seal covers CURRENT's first line, newline included.
  SKV_RETURN_IF_ERROR(crypto::verify_pointer(*f.keyring, first_line, *seal, label));
  return f;
}

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Delete:
      return "del";
    case ValueKind::Value:
      return "put";
    case ValueKind::ValuePointer:
      return "vlog";
  }
  return "?";
}

// "<key> @<seq> <kind> ts=<ts>" for an internal key.
std::string show_internal_key(const OutputOptions& out, std::string_view ikey) {
  ParsedInternalKey k;
  if (!parse_internal_key(ikey, &k)) return "(bad internal key " + to_hex(ikey) + ")";
  return (out.hex ? to_hex(k.user_key) : escape(k.user_key)) + " @" + std::to_string(k.sequence) +
         " " + kind_name(k.kind) + " ts=" + std::to_string(k.timestamp);
}

// The fields of an internal key in a JSON object: "key" (or "key_hex"), "sequence", "kind",
// "timestamp".
std::string ikey_json(const OutputOptions& out, std::string_view ikey) {
  ParsedInternalKey k;
  if (!parse_internal_key(ikey, &k)) return json_field("bad_internal_key", ikey, true);
  return json_field("key", k.user_key, out.hex) + ",\"sequence\":" + std::to_string(k.sequence) +
         "," + json_field("kind", kind_name(k.kind), false) +
         ",\"timestamp\":" + std::to_string(k.timestamp);
}

std::string show_bytes(const OutputOptions& out, std::string_view b) {
  return out.hex ? to_hex(b) : escape(b);
}

// Runs `body`, printing its error as every command does; returns the exit status.
int with_files(std::string_view command, const std::function<Status()>& body) {
  Status s = body();
  if (s.ok()) return kExitOk;
  print_error(command, s);
  return exit_code(s);
}

}  // namespace

int run_sst(const Database& db, const OutputOptions& out, const std::string& file, bool dump_keys,
            bool verify) {
  return with_files("sst", [&]() -> Status {
    SKV_ASSIGN_OR_RETURN(Files f, open_files(db));
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(file, &type, &number) || type != FileType::Table) {
      return Status::invalid_argument("'" + file + "' is not a table's name (NNNNNN.sst)");
    }
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> reader, f.storage->objects().open(file));
    const uint64_t size = reader->size();
    SKV_ASSIGN_OR_RETURN(std::shared_ptr<Table> table,
                         Table::open(std::move(reader), number, nullptr, f.keyring.get()));
    const TableProperties& p = table->properties();
    if (!out.json) {
      std::printf("file                 %s\n", file.c_str());
      std::printf("bytes                %" PRIu64 "\n", size);
      std::printf("entries              %" PRIu64 " (%" PRIu64 " deletes)\n", p.num_entries,
                  p.num_deletions);
      std::printf("data_blocks          %" PRIu64 "\n", p.data_blocks);
      std::printf("raw_key_bytes        %" PRIu64 "\n", p.raw_key_bytes);
      std::printf("raw_value_bytes      %" PRIu64 "\n", p.raw_value_bytes);
      std::printf("sequences            %" PRIu64 " to %" PRIu64 "\n", p.smallest_seq,
                  p.largest_seq);
      std::printf("smallest             %s\n", show_internal_key(out, p.smallest_key).c_str());
      std::printf("largest              %s\n", show_internal_key(out, p.largest_key).c_str());
    }
    std::string json =
        "{" + json_field("file", file, false) + ",\"bytes\":" + std::to_string(size) +
        ",\"entries\":" + std::to_string(p.num_entries) +
        ",\"deletes\":" + std::to_string(p.num_deletions) +
        ",\"data_blocks\":" + std::to_string(p.data_blocks) +
        ",\"raw_key_bytes\":" + std::to_string(p.raw_key_bytes) +
        ",\"raw_value_bytes\":" + std::to_string(p.raw_value_bytes) +
        ",\"smallest_sequence\":" + std::to_string(p.smallest_seq) +
        ",\"largest_sequence\":" + std::to_string(p.largest_seq) + ",\"smallest\":{" +
        ikey_json(out, p.smallest_key) + "},\"largest\":{" + ikey_json(out, p.largest_key) + "}";
    if (dump_keys || verify) {
      std::unique_ptr<InternalIterator> it = table->new_iterator(TableReadOptions{true, false});
      uint64_t n = 0;
      std::string dumped;
      for (it->seek_first(); it->valid(); it->next()) {
        ++n;
        if (!dump_keys) continue;
        ParsedInternalKey k;
        const bool parsed = parse_internal_key(it->key(), &k);
        std::string line = show_internal_key(out, it->key());
        std::string entry = "{" + ikey_json(out, it->key());
        if (parsed && k.kind == ValueKind::ValuePointer) {
          Result<vlog::ValuePointer> ptr = vlog::decode_value_pointer(it->value());
          line += ptr.ok() ? " -> " + vlog_file_name(ptr->file_number) + "@" +
                                 std::to_string(ptr->offset) + "+" + std::to_string(ptr->size)
                           : " -> (bad pointer)";
          entry += ptr.ok() ? ",\"vlog\":{" +
                                  json_field("file", vlog_file_name(ptr->file_number), false) +
                                  ",\"offset\":" + std::to_string(ptr->offset) +
                                  ",\"size\":" + std::to_string(ptr->size) + "}"
                            : ",\"vlog\":null";
        } else if (parsed && k.kind == ValueKind::Value) {
          line += "\t" + show_bytes(out, it->value());
          entry += "," + json_field("value", it->value(), out.hex);
        }
        if (out.json) {
          dumped += (dumped.empty() ? "" : ",") + entry + "}";
        } else {
          std::printf("%s\n", line.c_str());
        }
      }
      SKV_RETURN_IF_ERROR(it->status());
      if (dump_keys) json += ",\"dump\":[" + dumped + "]";
      if (verify) {
        if (n != p.num_entries) {
          return Status::corruption(file + ": holds " + std::to_string(n) +
                                    " entries; its properties say " +
                                    std::to_string(p.num_entries));
        }
        if (!out.json) std::printf("verified             every block, %" PRIu64 " entries\n", n);
        json += ",\"verified\":true";
      }
    }
    if (out.json) std::printf("%s}\n", json.c_str());
    return Status::OK();
  });
}

int run_wal(const Database& db, const OutputOptions& out, bool dump) {
  return with_files("wal", [&]() -> Status {
    SKV_ASSIGN_OR_RETURN(Files f, open_files(db));
    SKV_ASSIGN_OR_RETURN(std::vector<std::string> names, f.storage->logs().list());
    std::map<uint64_t, std::string> wals;
    for (const auto& name : names) {
      FileType type;
      uint64_t number = 0;
      if (parse_file_name(name, &type, &number) && type == FileType::Wal) wals[number] = name;
    }
    std::string segments;
    Status failed;
    for (const auto& [number, name] : wals) {
      SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, f.storage->logs().open(name));
      log::Reader reader(file.get(), FileKind::Wal, f.keyring.get());
      FileHeader header;
      header.file_number = number;
      uint64_t records = 0, entries = 0;
      Status s = reader.read_header(&header);
      std::string record;
      std::string dumped;
      while (s.ok()) {
        uint64_t offset = 0;
        Result<bool> more = reader.read_record(&record, &offset);
        if (!more.ok()) {
          s = more.status();
          break;
        }
        if (!*more) break;
        ++records;
        s = WriteBatch::check(record);
        if (!s.ok()) {
          s = s.with_context(name + " offset " + std::to_string(offset));
          break;
        }
        const SequenceNumber seq = WriteBatch::sequence_of(record);
        WriteBatch::for_each(record, [&](const WriteBatch::Entry& e) {
          ++entries;
          if (!dump) return;
          if (out.json) {
            dumped +=
                (dumped.empty() ? "" : ",") + std::string("{\"sequence\":") + std::to_string(seq) +
                "," + json_field("kind", kind_name(e.kind), false) + "," +
                json_field("key", e.key, out.hex) +
                (e.kind == ValueKind::Delete ? "" : "," + json_field("value", e.value, out.hex)) +
                "}";
            return;
          }
          std::printf("  %s @%" PRIu64 " %s %s%s\n", name.c_str(), seq, kind_name(e.kind),
                      show_bytes(out, e.key).c_str(),
                      e.kind == ValueKind::Delete ? "" : ("\t" + show_bytes(out, e.value)).c_str());
        });
      }
      (void)file->close();
      if (out.json) {
        segments +=
            (segments.empty() ? "" : ",") + std::string("{") + json_field("name", name, false) +
            ",\"bytes\":" + std::to_string(file->size()) +
            ",\"records\":" + std::to_string(records) + ",\"entries\":" + std::to_string(entries) +
            ",\"torn_tail\":" + (reader.torn_tail() ? "true" : "false") +
            ",\"hole\":" + (reader.hole() ? "true" : "false") +
            (dump ? ",\"dump\":[" + dumped + "]" : std::string()) +
            (s.ok() ? std::string() : "," + json_field("error", s.to_string(), false)) + "}";
      } else {
        std::printf("%s %" PRIu64 " bytes, %" PRIu64 " records, %" PRIu64 " entries%s\n",
                    name.c_str(), file->size(), records, entries,
                    reader.hole() ? ", ending at a hole (unwritten sectors of a write never synced)"
                    : reader.torn_tail() ? ", a torn record at the end"
                                         : "");
      }
      if (!s.ok()) {
        failed = s;
        break;
      }
    }
    // With --json the segments read (the damaged one with its error) are printed before the
    // error is reported.
    if (out.json) std::printf("{\"segments\":[%s]}\n", segments.c_str());
    return failed;
  });
}

int run_manifest(const Database& db, const OutputOptions& out, bool dump) {
  return with_files("manifest", [&]() -> Status {
    SKV_ASSIGN_OR_RETURN(Files f, open_files(db));
    FileType type;
    uint64_t number = 0;
    if (!parse_file_name(f.manifest, &type, &number) || type != FileType::Manifest) {
      return Status::corruption(db.dir + ": CURRENT does not name a manifest");
    }
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, f.storage->logs().open(f.manifest));
    log::Reader reader(file.get(), FileKind::Manifest, f.keyring.get());
    FileHeader header;
    SKV_RETURN_IF_ERROR(reader.read_header(&header));
    // The live files, replayed from every edit: added, then deleted.
    std::map<uint64_t, std::pair<int, FileMetaData>> tables;
    std::map<uint64_t, VlogFileMeta> vlogs;
    uint64_t edits = 0;
    std::string record;
    std::string dumped;
    for (;;) {
      uint64_t offset = 0;
      SKV_ASSIGN_OR_RETURN(const bool more, reader.read_record(&record, &offset));
      if (!more) break;
      VersionEdit edit;
      SKV_RETURN_IF_ERROR(edit.decode_from(record, f.manifest, offset));
      ++edits;
      if (dump && !out.json) {
        std::printf("edit %" PRIu64 " at %" PRIu64 ":\n%s\n", edits, offset,
                    edit.debug_string().c_str());
      }
      if (dump && out.json) {
        dumped += (dumped.empty() ? "" : ",") + std::string("{\"offset\":") +
                  std::to_string(offset) + "," + json_field("edit", edit.debug_string(), false) +
                  "}";
      }
      for (const auto& d : edit.deleted_files()) tables.erase(d.number);
      for (const auto& n : edit.new_files()) tables[n.meta.number] = {n.level, n.meta};
      for (uint64_t v : edit.deleted_vlog_files()) vlogs.erase(v);
      for (const auto& v : edit.new_vlog_files()) vlogs[v.number] = v;
    }
    if (!out.json)
      std::printf("manifest             %s, %" PRIu64 " edits\n", f.manifest.c_str(), edits);
    std::map<int, std::vector<const FileMetaData*>> levels;
    for (const auto& [n, lf] : tables) levels[lf.first].push_back(&lf.second);
    std::string levels_json;
    for (const auto& [level, files] : levels) {
      uint64_t bytes = 0;
      for (const FileMetaData* m : files) bytes += m->file_size;
      if (!out.json) {
        std::printf("L%d: %zu files, %" PRIu64 " bytes\n", level, files.size(), bytes);
      }
      std::string files_json;
      for (const FileMetaData* m : files) {
        if (out.json) {
          files_json += (files_json.empty() ? "" : ",") + std::string("{") +
                        json_field("name", table_file_name(m->number), false) +
                        ",\"bytes\":" + std::to_string(m->file_size) +
                        ",\"entries\":" + std::to_string(m->num_entries) + ",\"smallest\":{" +
                        ikey_json(out, m->smallest) + "},\"largest\":{" +
                        ikey_json(out, m->largest) + "}}";
          continue;
        }
        std::printf("  %s %" PRIu64 " bytes, %" PRIu64 " entries, [%s .. %s]\n",
                    table_file_name(m->number).c_str(), m->file_size, m->num_entries,
                    show_internal_key(out, m->smallest).c_str(),
                    show_internal_key(out, m->largest).c_str());
      }
      levels_json += (levels_json.empty() ? "" : ",") + std::string("{\"level\":") +
                     std::to_string(level) + ",\"bytes\":" + std::to_string(bytes) +
                     ",\"files\":[" + files_json + "]}";
    }
    std::string vlogs_json;
    for (const auto& [n, v] : vlogs) {
      if (out.json) {
        vlogs_json += (vlogs_json.empty() ? "" : ",") + std::string("{") +
                      json_field("name", vlog_file_name(n), false) +
                      ",\"bytes\":" + std::to_string(v.file_size) +
                      ",\"entries\":" + std::to_string(v.num_entries) + "}";
        continue;
      }
      std::printf("value log %s %" PRIu64 " bytes, %" PRIu64 " entries\n",
                  vlog_file_name(n).c_str(), v.file_size, v.num_entries);
    }
    if (out.json) {
      std::printf("{%s,\"edits\":%" PRIu64 ",\"levels\":[%s],\"value_logs\":[%s]%s}\n",
                  json_field("manifest", f.manifest, false).c_str(), edits, levels_json.c_str(),
                  vlogs_json.c_str(), dump ? (",\"dump\":[" + dumped + "]").c_str() : "");
    }
    return Status::OK();
  });
}

}  // namespace skv::cli
