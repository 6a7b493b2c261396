#include "native/migrate/rocksdb/block.h"

#include <bzlib.h>
#include <lz4.h>
#include <snappy.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include "native/migrate/rocksdb/decode.h"
#include "util/crc32c.h"

namespace skv::migration::rocksdb {

bool get_block_handle(std::string_view* in, BlockHandle* h) {
  return get_varint64(in, &h->offset) && get_varint64(in, &h->size);
}

bool BlockReader::checksum(const char* data, size_t n, uint32_t* out) const {
  switch (checksum_type) {
    case 1:
      *out = crc32c::mask(crc32c::value(data, n));
      return true;
    case 2:
      *out = XXH32(data, n, 0);
      return true;
    case 3:
      *out = static_cast<uint32_t>(XXH64(data, n, 0));
      return true;
    case 4: {
      uint32_t v = static_cast<uint32_t>(XXH3_64bits(data, n - 1));
      *out = v ^ (static_cast<uint8_t>(data[n - 1]) * 0x6b9083d9u);
      return true;
    }
    default:
      return false;
  }
}

namespace {

std::string name_of(unsigned type) {
  switch (type) {
    case 1:
      return "snappy";
    case 2:
      return "zlib";
    case 3:
      return "bzip2";
    case 4:
      return "lz4";
    case 5:
      return "lz4hc";
    case 6:
      return "xpress";
    case 7:
      return "zstd";
    default:
      return "type " + std::to_string(type);
  }
}

}  // namespace

Status BlockReader::read(const BlockHandle& h, std::string* out) const {
  std::string raw;
  if (h.size > (1ull << 31)) {
    return Status::corruption(file->where(h.offset, "block size " + std::to_string(h.size)));
  }
  if (Status s = file->read_at(h.offset, static_cast<size_t>(h.size) + 5, &raw); !s.ok()) {
    return s;
  }
  unsigned type = static_cast<unsigned char>(raw[h.size]);
  if (checksum_type != 0) {
    uint32_t want;
    if (!checksum(raw.data(), static_cast<size_t>(h.size) + 1, &want)) {
      return Status::not_supported(
          file->where(h.offset, "checksum type " + std::to_string(checksum_type)));
    }
    if (base_context_checksum != 0) {
      want += base_context_checksum ^
              (static_cast<uint32_t>(h.offset) + static_cast<uint32_t>(h.offset >> 32));
    }
    if (load32(raw.data() + h.size + 1) != want) {
      return Status::corruption(file->where(h.offset, "block checksum mismatch"));
    }
  }
  raw.resize(static_cast<size_t>(h.size));
  if (type == 0) {
    *out = std::move(raw);
    return Status::OK();
  }
  return decompress_block(*file, h.offset, type, format_version, dictionary, raw, out);
}

Status decompress_block(const SourceFile& file, uint64_t offset, unsigned type,
                        uint32_t format_version, const std::string& dictionary, std::string_view in,
                        std::string* out) {
  if (type == 0) {
    out->assign(in.data(), in.size());
    return Status::OK();
  }
  auto bad = [&](const std::string& what) {
    return Status::corruption(file.where(offset, name_of(type) + " block: " + what));
  };
  uint64_t size = 0;
  bool sized = false;
  if (type == 7 || ((type == 2 || type == 3 || type == 4 || type == 5) && format_version >= 2)) {
    uint32_t s32;
    if (!get_varint32(&in, &s32)) return bad("size prefix");
    size = s32;
    sized = true;
  } else if ((type == 4 || type == 5) && format_version < 2) {
    if (!get_fixed64(&in, &size)) return bad("size prefix");
    sized = true;
  }
  if (sized && size > (1ull << 31)) return bad("uncompressed size " + std::to_string(size));
  switch (type) {
    case 1: {
      size_t n;
      if (!snappy::GetUncompressedLength(in.data(), in.size(), &n) || n > (1u << 31)) {
        return bad("length");
      }
      out->resize(n);
      if (!snappy::RawUncompress(in.data(), in.size(), out->data())) return bad("data");
      return Status::OK();
    }
    case 2: {
      z_stream z{};
      if (inflateInit2(&z, -14) != Z_OK) return bad("init");
      if (!dictionary.empty()) {
        inflateSetDictionary(&z, reinterpret_cast<const Bytef*>(dictionary.data()),
                             static_cast<uInt>(dictionary.size()));
      }
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      z.avail_in = static_cast<uInt>(in.size());
      out->clear();
      char buf[16384];
      int r;
      do {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        r = inflate(&z, Z_NO_FLUSH);
        out->append(buf, sizeof buf - z.avail_out);
        if (out->size() > (1u << 31)) r = Z_DATA_ERROR;
      } while (r == Z_OK);
      inflateEnd(&z);
      if (r != Z_STREAM_END) return bad("data");
      if (sized && out->size() != size) return bad("size differs from its prefix");
      return Status::OK();
    }
    case 3: {
      bz_stream b{};
      if (BZ2_bzDecompressInit(&b, 0, 0) != BZ_OK) return bad("init");
      b.next_in = const_cast<char*>(in.data());
      b.avail_in = static_cast<unsigned>(in.size());
      out->clear();
      char buf[16384];
      int r;
      do {
        b.next_out = buf;
        b.avail_out = sizeof buf;
        r = BZ2_bzDecompress(&b);
        out->append(buf, sizeof buf - b.avail_out);
        if (out->size() > (1u << 31)) r = BZ_DATA_ERROR;
      } while (r == BZ_OK && (b.avail_in > 0 || b.avail_out == 0));
      BZ2_bzDecompressEnd(&b);
      if (r != BZ_STREAM_END) return bad("data");
      if (sized && out->size() != size) return bad("size differs from its prefix");
      return Status::OK();
    }
    case 4:
    case 5: {
      out->resize(static_cast<size_t>(size));
      int n;
      if (dictionary.empty()) {
        n = LZ4_decompress_safe(in.data(), out->data(), static_cast<int>(in.size()),
                                static_cast<int>(size));
      } else {
        n = LZ4_decompress_safe_usingDict(in.data(), out->data(), static_cast<int>(in.size()),
                                          static_cast<int>(size), dictionary.data(),
                                          static_cast<int>(dictionary.size()));
      }
      if (n < 0 || static_cast<uint64_t>(n) != size) return bad("data");
      return Status::OK();
    }
    case 7: {
      out->resize(static_cast<size_t>(size));
      ZSTD_DCtx* dc = ZSTD_createDCtx();
      size_t n = dictionary.empty()
                     ? ZSTD_decompressDCtx(dc, out->data(), out->size(), in.data(), in.size())
                     : ZSTD_decompress_usingDict(dc, out->data(), out->size(), in.data(), in.size(),
                                                 dictionary.data(), dictionary.size());
      ZSTD_freeDCtx(dc);
      if (ZSTD_isError(n) || n != size) return bad("data");
      return Status::OK();
    }
    default:
      return Status::not_supported(
          file.where(offset, "block compression " + name_of(type) + " is not supported"));
  }
}

BlockIter::BlockIter(const SourceFile* file, uint64_t block_offset, std::string_view block,
                     bool delta_values, bool first_keys)
    : file_(file),
      block_offset_(block_offset),
      block_(block),
      delta_(delta_values),
      first_keys_(first_keys) {
  if (block_.size() < 4) {
    fail("block shorter than its footer");
    return;
  }
  uint32_t footer = load32(block_.data() + block_.size() - 4);
  uint64_t restarts = footer & 0x7fffffffu;
  uint64_t tail = 4 + 4 * restarts;
  if ((footer >> 31) != 0 && block_.size() <= 65536) {
    if (block_.size() < 6) {
      fail("block hash index");
      return;
    }
    uint16_t buckets = static_cast<uint16_t>(load32(block_.data() + block_.size() - 6) & 0xffff);
    tail += 2 + buckets;
  } else if ((footer >> 31) != 0) {
    restarts = footer;  // large blocks never carry a hash index
    tail = 4 + 4 * restarts;
  }
  if (restarts == 0 || tail > block_.size()) {
    fail("block restart array");
    return;
  }
  end_ = block_.size() - static_cast<size_t>(tail);
}

bool BlockIter::fail(const std::string& what) {
  if (status_.ok()) status_ = Status::corruption(file_->where(block_offset_, what));
  pos_ = end_ = 0;
  return false;
}

bool BlockIter::next() {
  if (!status_.ok() || pos_ >= end_) return false;
  std::string_view in = block_.substr(pos_, end_ - pos_);
  uint32_t shared, non_shared, value_len = 0;
  if (!get_varint32(&in, &shared) || !get_varint32(&in, &non_shared) ||
      (!delta_ && !get_varint32(&in, &value_len))) {
    return fail("block entry header");
  }
  if (shared > key_.size() || non_shared > in.size()) return fail("block entry key");
  key_.resize(shared);
  key_.append(in.data(), non_shared);
  in.remove_prefix(non_shared);
  if (delta_) {
    std::string_view before = in;
    if (shared == 0 || !have_handle_) {
      if (!get_block_handle(&in, &handle_)) return fail("index entry handle");
    } else {
      uint64_t z;
      if (!get_varint64(&in, &z)) return fail("index entry size delta");
      int64_t delta = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
      handle_.offset = handle_.offset + handle_.size + 5;
      handle_.size = static_cast<uint64_t>(static_cast<int64_t>(handle_.size) + delta);
    }
    have_handle_ = true;
    std::string_view first_key;
    if (first_keys_ && !get_lenprefixed(&in, &first_key)) return fail("index entry first key");
    value_ = before.substr(0, before.size() - in.size());
  } else {
    if (value_len > in.size()) return fail("block entry value");
    value_ = in.substr(0, value_len);
    in.remove_prefix(value_len);
  }
  pos_ = end_ - in.size();
  return true;
}

}  // namespace skv::migration::rocksdb
