// Encoding of a VersionEdit (one manifest record payload). See docs/manifest.md.
//
//   edit            := field*
//   field           := tag:varint32 body
//   tag 1 log_number        body := number:varint64           (file numbers < 2^56)
//   tag 2 next_file_number  body := number:varint64
//   tag 3 last_sequence     body := sequence:varint64             (<= 2^56 - 1)
//   tag 4 compact_pointer   body := level:varint32 key:bytes       (key: an internal key)
//   tag 5 deleted_file      body := level:varint32 number:varint64
//   tag 6 new_file          body := level:varint32 number:varint64 file_size:varint64
//                                   smallest:bytes largest:bytes
//                                   smallest_seq:varint64 largest_seq:varint64
//                                   num_entries:varint64
//   tag 7 versioning        body := enabled:u8 retention_ns:varint64   (enabled: 0 or 1)
//   tag 8 last_timestamp    body := timestamp:varint64           (<= 2^63 - 1)
//   tag 9 new_vlog_file     body := number:varint64 file_size:varint64 num_entries:varint64
//   tag 10 deleted_vlog_file body := number:varint64
//   tag 11 table_vlog_refs  body := table:varint64 count:varint32
//                                   (vlog_number:varint64 bytes:varint64){count}
//   bytes           := length:varint64 byte{length}
//
// Tags 1-3, 7 and 8 appear at most once. Levels are < kMaxLevelCount. A new file has number >= 1,
// file_size >= 1, num_entries >= 1, well-formed internal keys with smallest <= largest, and
// smallest_seq <= largest_seq <= 2^56 - 1. A new value log has num_entries >= 1 and room for them:
// file_size >= 64 + 13 * num_entries, file_size <= 2^63. Tag 11 gives the value log bytes a table
// of the same edit (tag 6) points at: count >= 1, vlog numbers strictly ascending, bytes >= 13
// (one entry) and <= 2^63, at most one tag 11 per table. File numbers are in [1, 2^56). Unknown
// tags, failed checks and trailing bytes are corruption.

#include "version/version_edit.h"

#include "format/file_names.h"

#include <algorithm>
#include <cstdio>

#include "util/coding.h"
#include "vlog/value_pointer.h"
#include "vlog/vlog_format.h"

namespace skv {
namespace {

enum Tag : uint32_t {
  kLogNumber = 1,
  kNextFileNumber = 2,
  kLastSequence = 3,
  kCompactPointer = 4,
  kDeletedFile = 5,
  kNewFile = 6,
  kVersioning = 7,
  kLastTimestamp = 8,
  kNewVlogFile = 9,
  kDeletedVlogFile = 10,
  kTableVlogRefs = 11,
};

bool get_file_number(std::string_view* in, uint64_t* number) {
  return get_varint64(in, number) && *number >= 1 && *number < kMaxFileNumber;
}

bool get_vlog_file(std::string_view* in, VlogFileMeta* m) {
  if (!get_file_number(in, &m->number) || !get_varint64(in, &m->file_size) ||
      !get_varint64(in, &m->num_entries)) {
    return false;
  }
  return m->num_entries >= 1 && m->file_size > kFileHeaderSize &&
         m->file_size <= vlog::kMaxValueLogOffset &&
         m->num_entries <= (m->file_size - kFileHeaderSize) / vlog::kMinEntrySize;
}

// One tag 11 body: the table's number and its references.
bool get_vlog_refs(std::string_view* in, uint64_t* table, std::vector<VlogRef>* refs) {
  uint32_t count = 0;
  if (!get_file_number(in, table) || !get_varint32(in, &count) || count == 0) return false;
  // Each reference takes at least two bytes: never reserve more than the input can hold.
  if (count > in->size() / 2) return false;
  refs->clear();
  refs->reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    VlogRef r;
    if (!get_file_number(in, &r.vlog_number) || !get_varint64(in, &r.bytes) ||
        r.bytes < vlog::kMinEntrySize || r.bytes > vlog::kMaxValueLogOffset) {
      return false;
    }
    if (!refs->empty() && r.vlog_number <= refs->back().vlog_number) return false;
    refs->push_back(r);
  }
  return true;
}

bool get_level(std::string_view* in, int* level) {
  uint32_t v = 0;
  if (!get_varint32(in, &v) || v >= static_cast<uint32_t>(kMaxLevelCount)) return false;
  *level = static_cast<int>(v);
  return true;
}

bool get_internal_key(std::string_view* in, std::string* out) {
  std::string_view k;
  ParsedInternalKey parsed;
  if (!get_length_prefixed(in, &k) || !parse_internal_key(k, &parsed)) return false;
  out->assign(k.data(), k.size());
  return true;
}

bool get_new_file(std::string_view* in, VersionEdit::NewFile* nf) {
  FileMetaData& m = nf->meta;
  if (!get_level(in, &nf->level) || !get_varint64(in, &m.number) ||
      !get_varint64(in, &m.file_size) || !get_internal_key(in, &m.smallest) ||
      !get_internal_key(in, &m.largest) || !get_varint64(in, &m.smallest_seq) ||
      !get_varint64(in, &m.largest_seq) || !get_varint64(in, &m.num_entries)) {
    return false;
  }
  return m.number >= 1 && m.file_size >= 1 && m.num_entries >= 1 &&
         compare_internal_keys(m.smallest, m.largest) <= 0 && m.smallest_seq <= m.largest_seq &&
         m.largest_seq <= kMaxSequenceNumber;
}

std::string escape_key(std::string_view ikey) {
  std::string out;
  std::string_view user = ikey.size() >= kInternalKeySuffix ? extract_user_key(ikey) : ikey;
  for (unsigned char c : user) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  if (ikey.size() >= kInternalKeySuffix) {
    out += "@" + std::to_string(extract_trailer(ikey) >> 8);
  }
  return out;
}

}  // namespace

void VersionEdit::encode_to(std::string* dst) const {
  if (log_number_) {
    put_varint32(dst, kLogNumber);
    put_varint64(dst, *log_number_);
  }
  if (next_file_number_) {
    put_varint32(dst, kNextFileNumber);
    put_varint64(dst, *next_file_number_);
  }
  if (last_sequence_) {
    put_varint32(dst, kLastSequence);
    put_varint64(dst, *last_sequence_);
  }
  if (versioning_) {
    put_varint32(dst, kVersioning);
    dst->push_back(versioning_->enabled ? 1 : 0);
    put_varint64(dst, versioning_->retention_ns);
  }
  if (last_timestamp_) {
    put_varint32(dst, kLastTimestamp);
    put_varint64(dst, *last_timestamp_);
  }
  for (const auto& [level, key] : compact_pointers_) {
    put_varint32(dst, kCompactPointer);
    put_varint32(dst, static_cast<uint32_t>(level));
    put_length_prefixed(dst, key);
  }
  for (const auto& d : deleted_files_) {
    put_varint32(dst, kDeletedFile);
    put_varint32(dst, static_cast<uint32_t>(d.level));
    put_varint64(dst, d.number);
  }
  for (const auto& nf : new_files_) {
    const FileMetaData& m = nf.meta;
    put_varint32(dst, kNewFile);
    put_varint32(dst, static_cast<uint32_t>(nf.level));
    put_varint64(dst, m.number);
    put_varint64(dst, m.file_size);
    put_length_prefixed(dst, m.smallest);
    put_length_prefixed(dst, m.largest);
    put_varint64(dst, m.smallest_seq);
    put_varint64(dst, m.largest_seq);
    put_varint64(dst, m.num_entries);
  }
  for (const auto& v : new_vlog_files_) {
    put_varint32(dst, kNewVlogFile);
    put_varint64(dst, v.number);
    put_varint64(dst, v.file_size);
    put_varint64(dst, v.num_entries);
  }
  for (uint64_t number : deleted_vlog_files_) {
    put_varint32(dst, kDeletedVlogFile);
    put_varint64(dst, number);
  }
  for (const auto& nf : new_files_) {
    if (nf.meta.vlog_refs.empty()) continue;
    put_varint32(dst, kTableVlogRefs);
    put_varint64(dst, nf.meta.number);
    put_varint32(dst, static_cast<uint32_t>(nf.meta.vlog_refs.size()));
    for (const auto& r : nf.meta.vlog_refs) {
      put_varint64(dst, r.vlog_number);
      put_varint64(dst, r.bytes);
    }
  }
}

Status VersionEdit::decode_from(std::string_view input, std::string_view file, uint64_t offset) {
  clear();
  std::string_view in = input;
  const char* what = nullptr;
  // Tag 11 bodies, attached to their tables (tag 6, anywhere in the edit) at the end.
  std::vector<std::pair<uint64_t, std::vector<VlogRef>>> refs;
  while (!in.empty() && what == nullptr) {
    uint32_t tag = 0;
    if (!get_varint32(&in, &tag)) {
      what = "bad field tag";
      break;
    }
    uint64_t v = 0;
    switch (tag) {
      case kLogNumber:
        if (log_number_ || !get_varint64(&in, &v) || v >= kMaxFileNumber) {
          what = "bad or repeated log number";
        } else {
          log_number_ = v;
        }
        break;
      case kNextFileNumber:
        // The next number is one to hand out, so it is below the bound too.
        if (next_file_number_ || !get_varint64(&in, &v) || v >= kMaxFileNumber) {
          what = "bad or repeated next file number";
        } else {
          next_file_number_ = v;
        }
        break;
      case kLastSequence:
        if (last_sequence_ || !get_varint64(&in, &v) || v > kMaxSequenceNumber) {
          what = "bad or repeated last sequence";
        } else {
          last_sequence_ = v;
        }
        break;
      case kVersioning: {
        Versioning ver;
        if (versioning_ || in.empty() || static_cast<uint8_t>(in[0]) > 1) {
          what = "bad or repeated versioning";
          break;
        }
        ver.enabled = in[0] == 1;
        in.remove_prefix(1);
        if (!get_varint64(&in, &ver.retention_ns)) {
          what = "bad or repeated versioning";
        } else {
          versioning_ = ver;
        }
        break;
      }
      case kLastTimestamp:
        if (last_timestamp_ || !get_varint64(&in, &v) || v > kMaxTimestamp) {
          what = "bad or repeated last timestamp";
        } else {
          last_timestamp_ = v;
        }
        break;
      case kCompactPointer: {
        int level = 0;
        std::string key;
        if (!get_level(&in, &level) || !get_internal_key(&in, &key)) {
          what = "bad compact pointer";
        } else {
          compact_pointers_.emplace_back(level, std::move(key));
        }
        break;
      }
      case kDeletedFile: {
        DeletedFile d;
        if (!get_level(&in, &d.level) || !get_varint64(&in, &d.number) || d.number == 0 ||
            d.number >= kMaxFileNumber) {
          what = "bad deleted file";
        } else {
          deleted_files_.push_back(d);
        }
        break;
      }
      case kNewFile: {
        NewFile nf;
        if (!get_new_file(&in, &nf) || nf.meta.number >= kMaxFileNumber) {
          what = "bad new file";
        } else {
          new_files_.push_back(std::move(nf));
        }
        break;
      }
      case kNewVlogFile: {
        VlogFileMeta m;
        if (!get_vlog_file(&in, &m)) {
          what = "bad new value log file";
        } else {
          new_vlog_files_.push_back(m);
        }
        break;
      }
      case kDeletedVlogFile:
        if (!get_file_number(&in, &v)) {
          what = "bad deleted value log file";
        } else {
          deleted_vlog_files_.push_back(v);
        }
        break;
      case kTableVlogRefs: {
        std::pair<uint64_t, std::vector<VlogRef>> r;
        if (!get_vlog_refs(&in, &r.first, &r.second)) {
          what = "bad value log references";
        } else {
          refs.push_back(std::move(r));
        }
        break;
      }
      default:
        what = "unknown field tag";
        break;
    }
  }
  for (size_t i = 0; what == nullptr && i < refs.size(); ++i) {
    auto nf = std::find_if(new_files_.begin(), new_files_.end(),
                           [&](const NewFile& f) { return f.meta.number == refs[i].first; });
    if (nf == new_files_.end()) {
      what = "value log references for a table the edit does not add";
    } else if (!nf->meta.vlog_refs.empty()) {
      what = "repeated value log references for a table";
    } else {
      nf->meta.vlog_refs = std::move(refs[i].second);
    }
  }
  if (what == nullptr) return Status::OK();
  uint64_t at = offset + (input.size() - in.size());
  clear();
  return Status::corruption(std::string(file) + ": version edit at offset " +
                            std::to_string(offset) + ": " + what + " (near byte " +
                            std::to_string(at) + ")");
}

std::string VersionEdit::debug_string() const {
  std::string r = "VersionEdit {\n";
  if (log_number_) r += "  log_number: " + std::to_string(*log_number_) + "\n";
  if (next_file_number_) r += "  next_file_number: " + std::to_string(*next_file_number_) + "\n";
  if (last_sequence_) r += "  last_sequence: " + std::to_string(*last_sequence_) + "\n";
  if (last_timestamp_) r += "  last_timestamp: " + std::to_string(*last_timestamp_) + "\n";
  if (versioning_) {
    r += std::string("  versioning: ") + (versioning_->enabled ? "on" : "off") + ", retention_ns " +
         std::to_string(versioning_->retention_ns) + "\n";
  }
  for (const auto& [level, key] : compact_pointers_) {
    r += "  compact_pointer: L" + std::to_string(level) + " " + escape_key(key) + "\n";
  }
  for (const auto& d : deleted_files_) {
    r += "  delete: L" + std::to_string(d.level) + " #" + std::to_string(d.number) + "\n";
  }
  for (const auto& nf : new_files_) {
    const FileMetaData& m = nf.meta;
    r += "  add: L" + std::to_string(nf.level) + " #" + std::to_string(m.number) + " " +
         std::to_string(m.file_size) + " bytes [" + escape_key(m.smallest) + " .. " +
         escape_key(m.largest) + "] seq " + std::to_string(m.smallest_seq) + ".." +
         std::to_string(m.largest_seq) + " entries " + std::to_string(m.num_entries);
    for (const auto& ref : m.vlog_refs) {
      r += " vlog #" + std::to_string(ref.vlog_number) + ":" + std::to_string(ref.bytes);
    }
    r += "\n";
  }
  for (const auto& v : new_vlog_files_) {
    r += "  add vlog: #" + std::to_string(v.number) + " " + std::to_string(v.file_size) +
         " bytes, entries " + std::to_string(v.num_entries) + "\n";
  }
  for (uint64_t number : deleted_vlog_files_) {
    r += "  delete vlog: #" + std::to_string(number) + "\n";
  }
  r += "}";
  return r;
}

}  // namespace skv
