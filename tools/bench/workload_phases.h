// The workloads' phase sequences, each run against one opened engine: "crud", the crud-bench
// style workload, and "large", the large-value workload (docs/benchmarks.md describes both).
//
// Thread safety: a workload runs its phases one after the other on the calling thread; `run`
// starts the client threads of each phase and joins them before it returns.

#ifndef SKV_TOOLS_BENCH_WORKLOAD_PHASES_H_
#define SKV_TOOLS_BENCH_WORKLOAD_PHASES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "engine.h"
#include "report.h"
#include "workload.h"

namespace skv::bench {

// Runs and reports one measured phase: operations 0 .. ops-1 of `op`. Each row the phase counts
// wrote `user_bytes_per_row` bytes of user data (keys and values; 0 for phases that write
// nothing, or where it is not counted).
using PhaseFn = std::function<void(const std::string& id, uint64_t ops, uint64_t user_bytes_per_row,
                                   const OpFn& op)>;

void run_crud_workload(const RunConfig& config, Engine& engine, const PhaseFn& run);
void run_large_workload(const RunConfig& config, Engine& engine, const PhaseFn& run);

}  // namespace skv::bench

#endif  // SKV_TOOLS_BENCH_WORKLOAD_PHASES_H_
