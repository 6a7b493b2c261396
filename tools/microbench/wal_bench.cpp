// WAL append (core/src/wal/log_writer.h): framing one commit's WriteBatch as a log record
// (header, CRC32C) and appending it to the segment: to a file that discards the bytes (the
// writer's own cost), on the in-memory platform, on the POSIX platform (one write() per append),
// and appending plus fdatasync() on POSIX.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench_util.h"
#include "format/file_header.h"
#include "format/file_names.h"
#include "platform/memory/memory_platform.h"
#include "platform/posix/posix_platform.h"
#include "skv/queue_executor.h"
#include "wal/log_writer.h"
#include "wal/write_batch.h"

namespace skv::microbench {
namespace {

// A segment is replaced (untimed) once it holds this much, so memory and disk use stay bounded.
constexpr uint64_t kSegmentLimit = uint64_t{64} << 20;

// An open WAL segment on a storage, replaced by a new one on demand.
class WalTarget {
 public:
  WalTarget(std::shared_ptr<Platform> platform, const std::string& path)
      : platform_(std::move(platform)),
        storage_(value_or_die(platform_->open_storage(path, StorageOptions{}), "open_storage")) {
    open_next();
  }
  ~WalTarget() { close_current(); }

  log::Writer& writer() { return *writer_; }

  void rotate_if_full() {
    if (writer_->size() < kSegmentLimit) return;
    close_current();
    open_next();
  }

 private:
  void open_next() {
    ++number_;
    FileHeader header;
    header.kind = FileKind::Wal;
    header.file_number = number_;
    writer_ = std::make_unique<log::Writer>(
        value_or_die(storage_->logs().create(wal_file_name(number_)), "create WAL"), header);
  }
  void close_current() {
    if (writer_ == nullptr) return;
    check_ok(writer_->close(), "close WAL");
    writer_.reset();
    check_ok(storage_->logs().remove(wal_file_name(number_)), "remove WAL");
  }

  std::shared_ptr<Platform> platform_;
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<log::Writer> writer_;
  uint64_t number_ = 0;
};

// The payload of a one-row commit: a WriteBatch with one put of a 26-byte key.
std::string one_put_batch(size_t value_bytes) {
  std::mt19937_64 rng(kSeed);
  WriteBatch batch;
  batch.set_sequence(1);
  batch.put(make_key(0), make_value(rng, value_bytes), 1);
  return batch.encoded();
}

// A LogFile that only counts what it is given: isolates the writer from any storage.
class DiscardingLogFile final : public LogFile {
 public:
  const std::string& name() const override { return name_; }
  Status append(std::string_view data) override {
    size_ += data.size();
    benchmark::DoNotOptimize(data.data());
    return Status::OK();
  }
  Status sync() override { return Status::OK(); }
  uint64_t size() const override { return size_; }
  Status read_at(uint64_t, size_t, char*, std::string_view* result) const override {
    *result = {};
    return Status::OK();
  }
  Status truncate(uint64_t size) override {
    size_ = size;
    return Status::OK();
  }
  Status close() override { return Status::OK(); }

 private:
  std::string name_ = "discard.wal";
  uint64_t size_ = 0;
};

std::shared_ptr<Platform> posix_platform() {
  return std::make_shared<PosixPlatform>(std::make_shared<QueueExecutor>());
}

void append_loop(benchmark::State& state, WalTarget& wal, const std::string& payload) {
  for (auto _ : state) {
    check_ok(wal.writer().add_record(payload), "add_record");
    if (wal.writer().size() >= kSegmentLimit) {
      state.PauseTiming();
      wal.rotate_if_full();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(payload.size()));
}

// log::Writer::add_record of a one-put batch (value of `value_bytes`) to a LogFile that discards
// it: the record header, the CRC32C over the payload and the copy into the writer's buffer.
void BM_WalAppendDiscard(benchmark::State& state) {
  const std::string payload = one_put_batch(static_cast<size_t>(state.range(0)));
  FileHeader header;
  header.kind = FileKind::Wal;
  header.file_number = 1;
  log::Writer writer(std::make_unique<DiscardingLogFile>(), header);
  for (auto _ : state) check_ok(writer.add_record(payload), "add_record");
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(payload.size()));
}
BENCHMARK(BM_WalAppendDiscard)->ArgName("value_bytes")->Arg(100)->Arg(840);

// The same append to a segment on the in-memory platform (the storage of in-memory trees): the
// writer's work plus the platform's bookkeeping (fault-injection hook, quota, two mutexes) and an
// append to a std::string. No sync.
void BM_WalAppendMemory(benchmark::State& state) {
  const std::string payload = one_put_batch(static_cast<size_t>(state.range(0)));
  WalTarget wal(std::make_shared<MemoryPlatform>(), "microbench-wal");
  append_loop(state, wal, payload);
}
BENCHMARK(BM_WalAppendMemory)->ArgName("value_bytes")->Arg(100)->Arg(840);

// The same append to a segment on the POSIX platform: one write() to an O_APPEND file into the
// page cache per record. No sync (Durability::Eventual).
void BM_WalAppendPosix(benchmark::State& state) {
  const std::string payload = one_put_batch(static_cast<size_t>(state.range(0)));
  BenchDir dir("wal");
  WalTarget wal(posix_platform(), dir.path());
  append_loop(state, wal, payload);
}
BENCHMARK(BM_WalAppendPosix)->ArgName("value_bytes")->Arg(100)->Arg(840)->UseRealTime();

// A durable WAL write on POSIX: `records` one-put batches (840-byte values) appended with one
// write() (log::Writer::add_records, as the commit leader does for a group), then one
// fdatasync(). records=1 is a lone Immediate commit; larger groups show how far a sync is
// shared. Dominated by the storage's flush latency: set SKV_MICROBENCH_DIR to the disk to measure.
void BM_WalAppendSyncPosix(benchmark::State& state) {
  const std::string payload = one_put_batch(840);
  const std::vector<std::string_view> group(static_cast<size_t>(state.range(0)), payload);
  BenchDir dir("walsync");
  WalTarget wal(posix_platform(), dir.path());
  for (auto _ : state) {
    check_ok(wal.writer().add_records(group), "add_records");
    check_ok(wal.writer().sync(), "sync");
    if (wal.writer().size() >= kSegmentLimit) {
      state.PauseTiming();
      wal.rotate_if_full();
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(group.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(group.size() * payload.size()));
}
BENCHMARK(BM_WalAppendSyncPosix)->ArgName("records")->Arg(1)->Arg(16)->Arg(64)->UseRealTime();

}  // namespace
}  // namespace skv::microbench
