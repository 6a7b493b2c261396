#include "compaction/vlog_output.h"

#include <string>
#include <utility>

#include "format/file_names.h"
#include "util/status_macros.h"

namespace skv {

VlogOutput::VlogOutput(Storage* storage, std::function<Result<uint64_t>()> new_file_number,
                       uint64_t max_file_size, crypto::CipherSource* ciphers)
    : storage_(storage),
      new_file_number_(std::move(new_file_number)),
      max_file_size_(max_file_size),
      ciphers_(ciphers) {}

VlogOutput::~VlogOutput() {
  if (writer_ != nullptr) (void)writer_->close();
  writer_.reset();
  if (kept_) return;
  for (uint64_t number : created_) (void)storage_->logs().remove(vlog_file_name(number));
}

Result<vlog::ValuePointer> VlogOutput::add(std::string_view user_key, std::string_view value) {
  if (writer_ != nullptr && writer_->size() >= max_file_size_) {
    SKV_RETURN_IF_ERROR(close_current());
  }
  if (writer_ == nullptr) {
    SKV_ASSIGN_OR_RETURN(const uint64_t number, new_file_number_());
    const std::string name = vlog_file_name(number);
    std::shared_ptr<const crypto::FileCipher> cipher;
    if (ciphers_ != nullptr) {
      SKV_ASSIGN_OR_RETURN(cipher, ciphers_->for_new_file(FileKind::ValueLog, number, name));
    }
    SKV_ASSIGN_OR_RETURN(std::unique_ptr<LogFile> file, storage_->logs().create(name));
    created_.push_back(number);
    writer_ = std::make_unique<vlog::VlogWriter>(std::move(file), number, std::move(cipher));
    entries_ = 0;
    // The name is durable before any table that points into the file is written.
    SKV_RETURN_IF_ERROR(storage_->sync_dir());
  }
  SKV_ASSIGN_OR_RETURN(vlog::ValuePointer p, writer_->add(user_key, value));
  ++entries_;
  bytes_added_ += p.size;
  return p;
}

Status VlogOutput::sync() { return writer_ == nullptr ? Status::OK() : writer_->sync(); }

Status VlogOutput::close_current() {
  SKV_RETURN_IF_ERROR(writer_->sync());
  VlogFileMeta meta;
  meta.number = writer_->file_number();
  meta.file_size = writer_->size();
  meta.num_entries = entries_;
  SKV_RETURN_IF_ERROR(writer_->close());
  writer_.reset();
  done_.push_back(meta);
  return Status::OK();
}

Status VlogOutput::finish(std::vector<VlogFileMeta>* files) {
  if (writer_ != nullptr) SKV_RETURN_IF_ERROR(close_current());
  files->insert(files->end(), done_.begin(), done_.end());
  kept_ = true;
  return Status::OK();
}

}  // namespace skv
