#include "sstable/table.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "cache/block_cache.h"
#include "crypto/cipher_source.h"
#include "format/file_header.h"
#include "sstable/block.h"
#include "sstable/block_format.h"
#include "sstable/bloom.h"
#include "sstable/readahead_reader.h"
#include "sstable/table_properties.h"
#include "sstable/two_level_iterator.h"
#include "util/status_macros.h"

namespace skv {

namespace {

Status table_corruption(std::string_view file, std::string_view what, uint64_t offset) {
  std::string msg(file);
  msg += ": ";
  msg += what;
  msg += " at offset ";
  msg += std::to_string(offset);
  return Status::corruption(msg);
}

// True if [h.offset, h.end(trailer)) lies inside [begin, end) without overflowing.
bool handle_within(const BlockHandle& h, size_t trailer, uint64_t begin, uint64_t end) {
  if (h.offset < begin || h.offset > end) return false;
  if (h.size > kMaxBlockSize) return false;
  return h.size + trailer <= end - h.offset;
}

bool overlaps(const BlockHandle& a, const BlockHandle& b, size_t trailer) {
  return a.offset < b.end(trailer) && b.offset < a.end(trailer);
}

// The data blocks of a table found corrupt, by offset, with the error each gave. A table is
// immutable, so a block that failed its checks once fails them every time: later reads return
// the same error without reading or decompressing the block again. At most one entry per data
// block.
class CorruptBlocks {
 public:
  // The remembered error of the block at `offset`, or OK.
  Status find(uint64_t offset) const {
    if (!any_.load(std::memory_order_acquire)) return Status::OK();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = errors_.find(offset);
    return it == errors_.end() ? Status::OK() : it->second;
  }
  // Remembers `s` if it is a corruption (I/O errors may pass).
  void note(uint64_t offset, const Status& s) {
    if (!s.is_corruption()) return;
    std::lock_guard<std::mutex> lock(mu_);
    errors_.emplace(offset, s);
    any_.store(true, std::memory_order_release);
  }

 private:
  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::map<uint64_t, Status> errors_;
};

}  // namespace

struct Table::Rep {
  std::unique_ptr<ObjectReader> file;
  uint64_t file_number = 0;
  uint64_t file_size = 0;
  BlockCache* cache = nullptr;
  std::shared_ptr<const crypto::FileCipher> cipher;  // null for a plaintext table
  size_t trailer = kBlockTrailerSize;                // kSealedBlockTrailerSize when sealed
  uint64_t data_end = 0;  // data blocks lie in [kFileHeaderSize, data_end)
  TableFooter footer;
  std::shared_ptr<const Block> index;
  BlockContents filter_data;
  BloomFilter filter;
  bool has_filter = false;
  TableProperties props;
  TableBlockLimits limits;               // from props
  mutable CorruptBlocks corrupt_blocks;  // filled by reads

  const std::string& name() const { return file->name(); }

  // Reads, checks and decodes the block at `h`. Checks the handle against the data region.
  // The block cache is used as TableReadOptions::fill_cache and scan_pool say.
  // `reader` is the table's file or a sweep's ReadaheadReader over it.
  Result<std::shared_ptr<const Block>> load_data_block(const BlockHandle& h, bool fill_cache,
                                                       bool scan_pool,
                                                       const ObjectReader& reader) const {
    if (!handle_within(h, trailer, kFileHeaderSize, data_end)) {
      return table_corruption(name(), "data block handle out of range", h.offset);
    }
    if (cache == nullptr) return read_data_block(h, reader);
    const BlockCache::Priority priority =
        fill_cache ? BlockCache::Priority::High : BlockCache::Priority::Low;
    // A hit needs no reader (read_through would look it up the same way).
    if (std::shared_ptr<const void> hit = cache->lookup(file_number, h.offset, priority)) {
      return std::static_pointer_cast<const Block>(hit);
    }
    Status failed;
    std::shared_ptr<const void> block =
        cache->read_through(file_number, h.offset, priority, fill_cache || scan_pool,
                            [&](size_t* charge) -> std::shared_ptr<const void> {
                              Result<std::shared_ptr<const Block>> b = read_data_block(h, reader);
                              if (!b.ok()) {
                                failed = b.status();
                                return nullptr;
                              }
                              *charge = (*b)->memory_usage();
                              return *b;
                            });
    if (block == nullptr) return failed;
    return std::static_pointer_cast<const Block>(block);
  }

  // Reads, checks and decodes the block at `h`, without the cache.
  Result<std::shared_ptr<const Block>> read_data_block(const BlockHandle& h,
                                                       const ObjectReader& reader) const {
    // A block never enters the cache unless it passed its checks, so only a miss can be one
    // that failed before.
    Status known = corrupt_blocks.find(h.offset);
    if (!known.ok()) return known;
    Result<BlockContents> contents = read_block(reader, h, limits.data, cipher.get(),
                                                cache != nullptr ? cache->buffers() : nullptr);
    if (!contents.ok()) {
      corrupt_blocks.note(h.offset, contents.status());
      return contents.status();
    }
    Result<std::shared_ptr<const Block>> block =
        Block::create(std::move(contents).value(), name(), h.offset);
    if (!block.ok()) corrupt_blocks.note(h.offset, block.status());
    return block;
  }

  std::unique_ptr<BlockIterator> new_index_iterator() const {
    return std::make_unique<BlockIterator>(index, name(), footer.index.offset);
  }

  Status read_metadata(crypto::CipherSource* ciphers);
  Status check_index();
};

Status Table::Rep::read_metadata(crypto::CipherSource* ciphers) {
  const std::string& n = name();
  file_size = file->size();
  if (file_size < kFileHeaderSize + kTableFooterSize) {
    return table_corruption(n, "file too short for a table", file_size);
  }
  char header_buf[kFileHeaderSize];
  std::string_view got;
  SKV_RETURN_IF_ERROR(file->read_at(0, kFileHeaderSize, header_buf, &got));
  SKV_ASSIGN_OR_RETURN(FileHeader header, decode_file_header(got, FileKind::Table, n));
  if (header.file_number != file_number) {
    return table_corruption(
        n, "file header names file number " + std::to_string(header.file_number), 8);
  }
  SKV_ASSIGN_OR_RETURN(cipher, crypto::cipher_for_header(ciphers, header, n));
  const size_t footer_size = cipher != nullptr ? kSealedTableFooterSize : kTableFooterSize;
  if (cipher != nullptr) {
    trailer = kSealedBlockTrailerSize;
    if (file_size < kFileHeaderSize + footer_size) {
      return table_corruption(n, "file too short for an encrypted table", file_size);
    }
  }

  const uint64_t footer_offset = file_size - footer_size;
  char footer_buf[kSealedTableFooterSize];
  SKV_RETURN_IF_ERROR(file->read_at(footer_offset, footer_size, footer_buf, &got));
  if (got.size() != footer_size) {
    return table_corruption(n, "short read of the table footer", footer_offset);
  }
  if (cipher != nullptr) {
    SKV_RETURN_IF_ERROR(
        decode_sealed_table_footer(got, *cipher, footer_offset, file_size, &footer));
  } else {
    SKV_RETURN_IF_ERROR(decode_table_footer(got, n, footer_offset, &footer));
  }

  // Metadata blocks lie between the data blocks and the footer and do not overlap.
  has_filter = footer.filter.size != 0;
  if (!has_filter && footer.filter.offset != 0) {
    return table_corruption(n, "bad empty filter handle", footer_offset + 16);
  }
  std::vector<BlockHandle> meta = {footer.index, footer.properties};
  if (has_filter) meta.push_back(footer.filter);
  data_end = footer_offset;
  for (size_t i = 0; i < meta.size(); ++i) {
    if (!handle_within(meta[i], trailer, kFileHeaderSize, footer_offset)) {
      return table_corruption(n, "metadata block handle out of range", meta[i].offset);
    }
    for (size_t j = 0; j < i; ++j) {
      if (overlaps(meta[i], meta[j], trailer)) {
        return table_corruption(n, "overlapping metadata blocks", meta[i].offset);
      }
    }
    data_end = std::min(data_end, meta[i].offset);
  }

  SKV_ASSIGN_OR_RETURN(BlockContents props_data,
                       read_block(*file, footer.properties, kMaxPropertiesBlockSize, cipher.get()));
  if (!decode_table_properties(props_data.view(), &props) || props.num_entries == 0) {
    return table_corruption(n, "bad properties block", footer.properties.offset);
  }
  limits = table_block_limits(props);

  SKV_ASSIGN_OR_RETURN(BlockContents index_data,
                       read_block(*file, footer.index, limits.index, cipher.get()));
  SKV_ASSIGN_OR_RETURN(index, Block::create(std::move(index_data), n, footer.index.offset));

  if (has_filter) {
    SKV_ASSIGN_OR_RETURN(filter_data,
                         read_block(*file, footer.filter, limits.filter, cipher.get()));
    if (!filter.parse(filter_data.view())) {
      return table_corruption(n, "bad filter block", footer.filter.offset);
    }
  }
  return check_index();
}

// Every index entry must hold a well-formed handle inside the data region, in ascending,
// non-overlapping order, and there must be one per data block.
Status Table::Rep::check_index() {
  const std::string& n = name();
  BlockIterator it(index, n, footer.index.offset);
  uint64_t count = 0;
  uint64_t min_offset = kFileHeaderSize;
  for (it.seek_first(); it.valid(); it.next()) {
    std::string_view v = it.value();
    BlockHandle h;
    if (!decode_block_handle(&v, &h) || !v.empty()) {
      return table_corruption(n, "bad block handle in index block", footer.index.offset);
    }
    if (!handle_within(h, trailer, min_offset, data_end)) {
      return table_corruption(n, "data block handle out of range", h.offset);
    }
    min_offset = h.end(trailer);
    ++count;
  }
  SKV_RETURN_IF_ERROR(it.status());
  if (count != props.data_blocks) {
    return table_corruption(n, "index does not match the data block count", footer.index.offset);
  }
  return Status::OK();
}

Table::Table() : rep_(std::make_unique<Rep>()) {}

Table::~Table() = default;

Result<std::shared_ptr<Table>> Table::open(std::unique_ptr<ObjectReader> file, uint64_t file_number,
                                           BlockCache* cache, crypto::CipherSource* ciphers) {
  std::shared_ptr<Table> t(new Table());
  t->rep_->file = std::move(file);
  t->rep_->file_number = file_number;
  t->rep_->cache = cache;
  SKV_RETURN_IF_ERROR(t->rep_->read_metadata(ciphers));
  return t;
}

std::unique_ptr<InternalIterator> Table::new_iterator(const TableReadOptions& options) const {
  std::shared_ptr<const Table> self = shared_from_this();
  const bool fill_cache = options.fill_cache, scan_pool = options.scan_pool;
  // The loader is this iterator's alone, and so is its readahead window.
  std::shared_ptr<const ReadaheadReader> readahead =
      options.readahead ? std::make_shared<const ReadaheadReader>(*rep_->file) : nullptr;
  DataBlockLoader loader = [self, fill_cache, scan_pool, readahead](
                               const BlockHandle& h) -> Result<std::unique_ptr<BlockIterator>> {
    const ObjectReader& reader =
        readahead != nullptr ? static_cast<const ObjectReader&>(*readahead) : *self->rep_->file;
    SKV_ASSIGN_OR_RETURN(std::shared_ptr<const Block> block,
                         self->rep_->load_data_block(h, fill_cache, scan_pool, reader));
    return std::make_unique<BlockIterator>(std::move(block), self->rep_->name(), h.offset);
  };
  return new_two_level_iterator(rep_->new_index_iterator(), std::move(loader), rep_->name());
}

Status Table::get(std::string_view user_key, SequenceNumber snapshot, GetResult* out) const {
  *out = GetResult();
  if (!may_contain(user_key)) return Status::OK();
  const std::string target = make_seek_key(user_key, std::min(snapshot, kMaxSequenceNumber));
  const std::string& n = rep_->name();

  BlockIterator index(rep_->index, n, rep_->footer.index.offset);
  for (index.seek(target); index.valid(); index.next()) {
    std::string_view v = index.value();
    BlockHandle h;
    if (!decode_block_handle(&v, &h) || !v.empty()) {
      return table_corruption(n, "bad block handle in index block", rep_->footer.index.offset);
    }
    SKV_ASSIGN_OR_RETURN(
        std::shared_ptr<const Block> block,
        rep_->load_data_block(h, /*fill_cache=*/true, /*scan_pool=*/false, *rep_->file));
    BlockIterator data(std::move(block), n, h.offset);
    data.seek(target);
    SKV_RETURN_IF_ERROR(data.status());
    if (!data.valid()) continue;  // every key of this block sorts before the target
    ParsedInternalKey parsed;
    if (!parse_internal_key(data.key(), &parsed)) {
      return table_corruption(n, "bad internal key in data block", h.offset);
    }
    if (parsed.user_key != user_key) return Status::OK();
    out->found = true;
    out->kind = parsed.kind;
    out->value.assign(data.value());
    out->sequence = parsed.sequence;
    out->timestamp = parsed.timestamp;
    return Status::OK();
  }
  return index.status();
}

bool Table::may_contain(std::string_view user_key) const {
  return !rep_->has_filter || rep_->filter.may_contain(user_key);
}

const TableProperties& Table::properties() const { return rep_->props; }

uint64_t Table::file_number() const { return rep_->file_number; }

uint64_t Table::file_size() const { return rep_->file_size; }

const std::string& Table::file_name() const { return rep_->name(); }

}  // namespace skv
