// skv_migrate_bench: import throughput of skv::migrate() from a RocksDB database, against the
// copy a user could write without it (open the database with RocksDB, iterate, put every pair
// into skv in the same batches). docs/benchmarks.md, "Migration".
//
// It writes a RocksDB database of about --mib MiB of keys and values with Debian's RocksDB
// (default options: Snappy blocks, 4 KiB blocks; the last writes left in the WAL), then runs the
// two copies --rounds times each, interleaved, each into a fresh skv directory, and prints MB/s
// (of source keys and values) and keys/s per round and the median. Both copies must give the
// same number of keys, or the run fails.
//
// Exit status: 0 done, 1 a copy failed, 2 bad usage.

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "skv/migrate.h"
#include "skv/skv.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    "usage: skv_migrate_bench [--mib M] [--rounds R] [--value-size B] [--dir D]\n"
    "  --mib M         MiB of keys and values in the RocksDB source (default 1024)\n"
    "  --rounds R      runs of each copy, interleaved; the median is reported (default 3)\n"
    "  --value-size B  bytes per value (default 400; keys are 20 bytes)\n"
    "  --dir D         scratch directory (default $TMPDIR or /tmp)\n";

struct Config {
  uint64_t mib = 1024;
  int rounds = 3;
  size_t value_size = 400;
  std::string dir;
};

struct Round {
  double seconds = 0;
  uint64_t keys = 0;
};

// A value that compresses about as real data does (half random-ish, half repeated).
std::string value_for(uint64_t i, size_t size) {
  std::string v(size, 'v');
  uint64_t x = i * 0x9E3779B97F4A7C15ull + 1;
  for (size_t j = 0; j < size / 2; ++j) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[j] = static_cast<char>('a' + x % 26);
  }
  return v;
}

std::string key_for(uint64_t i) {
  char buf[32];
  // Hashed order, so the writes are not sorted (as most real loads are not).
  const uint64_t h = (i * 0xD6E8FEB86659FD93ull) ^ (i >> 7);
  std::snprintf(buf, sizeof(buf), "k%019" PRIu64, h);
  return buf;
}

bool make_source(const std::string& path, const Config& c, uint64_t* n_out) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.error_if_exists = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "rocksdb open %s: %s\n", path.c_str(), s.ToString().c_str());
    return false;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  const uint64_t n = c.mib * 1024 * 1024 / (20 + c.value_size);
  rocksdb::WriteBatch batch;
  for (uint64_t i = 0; i < n; ++i) {
    batch.Put(key_for(i), value_for(i, c.value_size));
    if (batch.Count() == 1000 || i + 1 == n) {
      s = db->Write(rocksdb::WriteOptions(), &batch);
      if (!s.ok()) {
        std::fprintf(stderr, "rocksdb write: %s\n", s.ToString().c_str());
        return false;
      }
      batch.Clear();
    }
    // Everything but the last 1% is flushed and compacted as RocksDB chooses.
    if (i + 1 == n - n / 100) db->Flush(rocksdb::FlushOptions());
  }
  s = db->Close();
  *n_out = n;
  return s.ok();
}

// The copy without migrate(): RocksDB's own iterator, and skv transactions of about 4 MiB.
bool iterate_and_put(const std::string& src, const std::string& dst, Round* r) {
  const auto t0 = Clock::now();
  rocksdb::Options options;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, src, &raw);
  if (!s.ok()) {
    std::fprintf(stderr, "rocksdb open: %s\n", s.ToString().c_str());
    return false;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  auto tree = skv::TreeBuilder().with_path(dst).build();
  if (!tree.ok()) {
    std::fprintf(stderr, "skv open: %s\n", tree.status().to_string().c_str());
    return false;
  }
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  size_t bytes = 0;
  auto tx = tree->begin_with_mode(skv::Mode::WriteOnly);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    skv::Status put = tx->set(std::string_view(it->key().data(), it->key().size()),
                              std::string_view(it->value().data(), it->value().size()));
    if (!put.ok()) {
      std::fprintf(stderr, "skv set: %s\n", put.to_string().c_str());
      return false;
    }
    ++r->keys;
    bytes += it->key().size() + it->value().size();
    if (bytes >= (4u << 20)) {
      if (skv::Status c = tx->commit().wait(); !c.ok()) return false;
      tx = tree->begin_with_mode(skv::Mode::WriteOnly);
      bytes = 0;
    }
  }
  if (!it->status().ok()) return false;
  if (skv::Status c = tx->commit().wait(); !c.ok()) return false;
  if (skv::Status f = tree->flush().wait(); !f.ok()) return false;
  if (skv::Status c = tree->close(); !c.ok()) return false;
  r->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return true;
}

bool with_migrate(const std::string& src, const std::string& dst, Round* r) {
  const auto t0 = Clock::now();
  auto summary = skv::migrate(src, dst);
  if (!summary.ok()) {
    std::fprintf(stderr, "migrate: %s\n", summary.status().to_string().c_str());
    return false;
  }
  r->keys = summary->keys;
  r->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  const char* tmp = std::getenv("TMPDIR");
  c.dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/skv-migrate-bench";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--mib" && v) {
      c.mib = std::strtoull(v, nullptr, 10);
    } else if (a == "--rounds" && v) {
      c.rounds = std::atoi(v);
    } else if (a == "--value-size" && v) {
      c.value_size = std::strtoull(v, nullptr, 10);
    } else if (a == "--dir" && v) {
      c.dir = v;
    } else {
      std::fprintf(stderr, "skv_migrate_bench: bad argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
    ++i;
  }
  if (c.mib == 0 || c.rounds < 1 || c.value_size == 0) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  std::error_code ec;
  fs::remove_all(c.dir, ec);
  fs::create_directories(c.dir);
  const std::string src = c.dir + "/rocksdb";
  uint64_t n = 0;
  std::printf("writing a RocksDB database of %" PRIu64 " MiB of keys and values...\n", c.mib);
  std::fflush(stdout);
  if (!make_source(src, c, &n)) return 1;
  uint64_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(src)) {
    if (e.is_regular_file()) on_disk += e.file_size();
  }
  const double data_mb = static_cast<double>(n * (20 + c.value_size)) / 1e6;
  std::printf("source: %" PRIu64 " keys, %.1f MB of keys and values, %.1f MB on disk\n\n", n,
              data_mb, static_cast<double>(on_disk) / 1e6);
  std::vector<double> mig;
  std::vector<double> copy;
  std::printf("| round | copy | seconds | MB/s | keys/s |\n| ---: | --- | ---: | ---: | ---: |\n");
  for (int round = 1; round <= c.rounds; ++round) {
    for (int which = 0; which < 2; ++which) {
      const bool use_migrate = (which == 0) == (round % 2 == 1);  // alternate who goes first
      const std::string dst =
          c.dir + "/skv-" + std::to_string(round) + "-" + (use_migrate ? "migrate" : "copy");
      Round r;
      if (!(use_migrate ? with_migrate(src, dst, &r) : iterate_and_put(src, dst, &r))) return 1;
      if (r.keys != n) {
        std::fprintf(stderr, "%s copied %" PRIu64 " keys, the source has %" PRIu64 "\n",
                     use_migrate ? "migrate" : "iterate-and-put", r.keys, n);
        return 1;
      }
      (use_migrate ? mig : copy).push_back(r.seconds);
      std::printf("| %d | %s | %.2f | %.1f | %.0f |\n", round,
                  use_migrate ? "skv migrate" : "RocksDB iterate + skv put", r.seconds,
                  data_mb / r.seconds, static_cast<double>(n) / r.seconds);
      std::fflush(stdout);
      fs::remove_all(dst, ec);
    }
  }
  const double m = median(mig);
  const double p = median(copy);
  std::printf(
      "\nmedian: skv migrate %.1f MB/s (%.0f keys/s), RocksDB iterate + skv put %.1f MB/s "
      "(%.0f keys/s); migrate / iterate-and-put = %.2f\n",
      data_mb / m, static_cast<double>(n) / m, data_mb / p, static_cast<double>(n) / p, p / m);
  fs::remove_all(c.dir, ec);
  return 0;
}
