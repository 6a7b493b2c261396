#include "sstable/block_format.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/status_macros.h"

namespace skv {

namespace {

Status corrupt(std::string_view file, std::string_view what, uint64_t offset) {
  std::string msg(file);
  msg += ": ";
  msg += what;
  msg += " at offset ";
  msg += std::to_string(offset);
  return Status::corruption(msg);
}

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// One decompression context per thread, reused across blocks.
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> ctx;
  if (!ctx) ctx.reset(ZSTD_createDCtx());
  return ctx.get();
}

}  // namespace

void encode_block_handle(const BlockHandle& h, std::string* dst) {
  put_varint64(dst, h.offset);
  put_varint64(dst, h.size);
}

bool decode_block_handle(std::string_view* in, BlockHandle* out) {
  return get_varint64(in, &out->offset) && get_varint64(in, &out->size);
}

void encode_table_footer(const TableFooter& f, std::string* dst) {
  char buf[kTableFooterSize] = {};
  encode_fixed64(buf + 0, f.index.offset);
  encode_fixed64(buf + 8, f.index.size);
  encode_fixed64(buf + 16, f.filter.offset);
  encode_fixed64(buf + 24, f.filter.size);
  encode_fixed64(buf + 32, f.properties.offset);
  encode_fixed64(buf + 40, f.properties.size);
  encode_fixed32(buf + 48, 0);
  encode_fixed64(buf + 52, kTableMagic);
  encode_fixed32(buf + 60, crc32c::mask(crc32c::value(buf, 60)));
  dst->append(buf, kTableFooterSize);
}

Status decode_table_footer(std::string_view input, std::string_view file, uint64_t offset,
                           TableFooter* out) {
  if (input.size() < kTableFooterSize) return corrupt(file, "short table footer", offset);
  const char* p = input.data();
  if (decode_fixed64(p + 52) != kTableMagic) return corrupt(file, "bad table magic", offset);
  if (crc32c::unmask(decode_fixed32(p + 60)) != crc32c::value(p, 60)) {
    return corrupt(file, "table footer checksum mismatch", offset);
  }
  if (decode_fixed32(p + 48) != 0) return corrupt(file, "bad reserved footer field", offset);
  out->index = {decode_fixed64(p + 0), decode_fixed64(p + 8)};
  out->filter = {decode_fixed64(p + 16), decode_fixed64(p + 24)};
  out->properties = {decode_fixed64(p + 32), decode_fixed64(p + 40)};
  return Status::OK();
}

void encode_sealed_table_footer(const TableFooter& f, const crypto::FileCipher& cipher,
                                uint64_t offset, std::string* dst) {
  char buf[64];
  encode_fixed64(buf + 0, f.index.offset);
  encode_fixed64(buf + 8, f.index.size);
  encode_fixed64(buf + 16, f.filter.offset);
  encode_fixed64(buf + 24, f.filter.size);
  encode_fixed64(buf + 32, f.properties.offset);
  encode_fixed64(buf + 40, f.properties.size);
  encode_fixed64(buf + 48, offset + kSealedTableFooterSize);
  encode_fixed64(buf + 56, kTableMagic);
  cipher.seal(offset, std::string_view(buf, sizeof(buf)), dst);
}

Status decode_sealed_table_footer(std::string_view input, const crypto::FileCipher& cipher,
                                  uint64_t offset, uint64_t file_size, TableFooter* out) {
  const std::string& file = cipher.label();
  if (input.size() != kSealedTableFooterSize) return corrupt(file, "short table footer", offset);
  std::string plain;
  SKV_RETURN_IF_ERROR(cipher.open(offset, input, &plain));
  const char* p = plain.data();
  if (plain.size() != 64 || decode_fixed64(p + 56) != kTableMagic) {
    return corrupt(file, "bad table magic", offset);
  }
  if (decode_fixed64(p + 48) != file_size) {
    return corrupt(file, "sealed footer records another file size", offset);
  }
  out->index = {decode_fixed64(p + 0), decode_fixed64(p + 8)};
  out->filter = {decode_fixed64(p + 16), decode_fixed64(p + 24)};
  out->properties = {decode_fixed64(p + 32), decode_fixed64(p + 40)};
  return Status::OK();
}

BlockContents BlockContents::copy_of(std::string_view bytes, BlockBufferPool* buffers) {
  BlockContents c;
  c.data = BlockBuffer::allocate(bytes.size(), buffers);
  if (!bytes.empty()) std::memcpy(c.data.get(), bytes.data(), bytes.size());
  c.size = bytes.size();
  return c;
}

BlockEncoder::BlockEncoder(Compression compression, int zstd_level,
                           std::shared_ptr<const crypto::FileCipher> cipher)
    : compression_(compression), level_(zstd_level), cipher_(std::move(cipher)) {}

BlockEncoder::~BlockEncoder() {
  if (cctx_ != nullptr) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
}

void BlockEncoder::encode(std::string_view raw, bool allow_compression, std::string* out,
                          uint64_t position) {
  if (cipher_ != nullptr) {
    // Frame the payload and type into plain_, then seal them in place of the plaintext.
    encode_payload(raw, allow_compression, &plain_);
    out->clear();
    cipher_->seal(position, plain_, out);
  } else {
    encode_payload(raw, allow_compression, out);
  }
  put_fixed32(out, crc32c::mask(crc32c::value(out->data(), out->size())));
}

void BlockEncoder::encode_payload(std::string_view raw, bool allow_compression, std::string* out) {
  out->clear();
  uint8_t type = kBlockTypeNone;
  // Tiny blocks cannot save an eighth once the frame header is paid for.
  if (allow_compression && compression_ == Compression::Zstd && raw.size() >= 64) {
    if (cctx_ == nullptr) cctx_ = ZSTD_createCCtx();
    if (cctx_ != nullptr) {
      put_varint64(out, raw.size());
      size_t prefix = out->size();
      size_t bound = ZSTD_compressBound(raw.size());
      out->resize(prefix + bound);
      size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(cctx_), out->data() + prefix, bound,
                                   raw.data(), raw.size(), level_);
      if (!ZSTD_isError(n) && prefix + n <= raw.size() - raw.size() / 8) {
        out->resize(prefix + n);
        type = kBlockTypeZstd;
      }
    }
  }
  if (type == kBlockTypeNone) out->assign(raw.data(), raw.size());
  out->push_back(static_cast<char>(type));
}

Result<BlockContents> read_block(const ObjectReader& file, const BlockHandle& h, uint64_t max_size,
                                 const crypto::FileCipher* cipher, BlockBufferPool* buffers) {
  const std::string& name = file.name();
  const uint64_t limit = std::min<uint64_t>(max_size, kMaxBlockSize);
  if (h.size > limit) {
    return corrupt(name,
                   "block of " + std::to_string(h.size) + " bytes, above the " +
                       std::to_string(limit) + " its table allows,",
                   h.offset);
  }
  const uint64_t n = h.size + (cipher != nullptr ? kSealedBlockTrailerSize : kBlockTrailerSize);
  const uint64_t file_size = file.size();
  if (h.offset > file_size || n > file_size - h.offset) {
    return corrupt(name, "block handle outside the file", h.offset);
  }
  BlockBuffer buf = BlockBuffer::allocate(static_cast<size_t>(n), buffers);
  std::string_view got;
  SKV_RETURN_IF_ERROR(file.read_at(h.offset, static_cast<size_t>(n), buf.get(), &got));
  if (got.size() != n) return corrupt(name, "truncated block", h.offset);
  const size_t checked = static_cast<size_t>(n) - 4;  // everything before the crc
  if (crc32c::unmask(decode_fixed32(got.data() + checked)) != crc32c::value(got.data(), checked)) {
    return corrupt(name, "block checksum mismatch", h.offset);
  }
  const char* data = got.data();
  const size_t payload = static_cast<size_t>(h.size);
  if (cipher != nullptr) {
    // A sealed block is opened where it was read (payload ‖ type ‖ tag), without a second buffer.
    if (got.data() != buf.get()) {
      std::memmove(buf.get(), got.data(), checked);
      data = buf.get();
    }
    SKV_RETURN_IF_ERROR(cipher->open_in_place(h.offset, buf.get(), checked));
  }
  const uint8_t type = static_cast<uint8_t>(data[payload]);
  if (type == kBlockTypeNone) {
    if (data == buf.get()) {
      BlockContents c;
      c.data = std::move(buf);
      c.size = payload;
      return c;
    }
    return BlockContents::copy_of(std::string_view(data, payload), buffers);
  }
  if (type != kBlockTypeZstd) return corrupt(name, "unknown block compression type", h.offset);

  uint64_t raw_size = 0;
  const char* p = decode_varint64(data, data + payload, &raw_size);
  if (p == nullptr) return corrupt(name, "bad compressed block length", h.offset);
  if (raw_size > limit) {
    return corrupt(name,
                   "compressed block claiming " + std::to_string(raw_size) + " bytes, above the " +
                       std::to_string(limit) + " its table allows,",
                   h.offset);
  }
  const size_t frame_size = static_cast<size_t>(data + payload - p);
  unsigned long long declared = ZSTD_getFrameContentSize(p, frame_size);
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != raw_size) {
    return corrupt(name, "compressed block length mismatch", h.offset);
  }
  ZSTD_DCtx* dctx = thread_dctx();
  if (dctx == nullptr) return Status::io_error(name + ": cannot allocate a zstd context");
  BlockContents c;
  c.data = BlockBuffer::allocate(static_cast<size_t>(raw_size), buffers);
  size_t r = ZSTD_decompressDCtx(dctx, c.data.get(), static_cast<size_t>(raw_size), p, frame_size);
  if (ZSTD_isError(r) || r != raw_size) {
    return corrupt(name, "block decompression failed", h.offset);
  }
  c.size = static_cast<size_t>(raw_size);
  return c;
}

}  // namespace skv
