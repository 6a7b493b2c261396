#!/usr/bin/env bash
# Builds skv's libFuzzer targets (tests/fuzz) with clang-14, ASan and UBSan in ./build-fuzz, then
# runs each one for a while, starting from a scratch copy of its seed corpus (the committed
# corpus in tests/fuzz/corpus is never modified).
#
#   tools/fuzz.sh                       every target for 20 s
#   tools/fuzz.sh --seconds 300 table   one target for 5 minutes
#   tools/fuzz.sh --build-only          build, run nothing
#   tools/fuzz.sh --keep                keep the scratch folder (grown corpora, logs) afterwards
#
# Before fuzzing, each target replays the inputs in tests/fuzz/known/<target>-* (inputs that once
# found core bugs; they must pass now).
# Targets: wal_reader block table manifest vlog encrypted. Exits nonzero if a build fails or any target finds a
# crash, a leak, a timeout or an out-of-memory input; it then prints the reproducer's path and the
# command that replays it, and keeps the scratch folder. Environment: CC/CXX (default clang-14 /
# clang++-14), JOBS (build parallelism, default 2), SKV_FUZZ_BUILD_DIR (default ./build-fuzz),
# TMPDIR (where the scratch folder goes). tools/setup.sh installs clang-14, libclang-rt-14-dev
# and llvm-14 (llvm-symbolizer, for readable stack traces).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

ALL_TARGETS=(wal_reader block table manifest vlog encrypted)
seconds=20
build_only=0
keep=0
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    --build-only) build_only=1; shift ;;
    --keep) keep=1; shift ;;
    --strict) export SKV_FUZZ_STRICT=1; shift ;;  # the default; kept for old scripts
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2; }
((${#targets[@]})) || targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz.sh: no target '$t' (${ALL_TARGETS[*]})" >&2; exit 2; }
done

# Largest input per target: room for several blocks or records, small enough that one input
# costs milliseconds.
max_len() {
  case "$1" in
    wal_reader) echo 32768 ;;
    block) echo 16384 ;;
    table) echo 32768 ;;
    manifest) echo 16384 ;;
    vlog) echo 32768 ;;
    encrypted) echo 32768 ;;
  esac
}

BUILD=${SKV_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
export CC=${CC:-clang-14} CXX=${CXX:-clang++-14}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
echo "[fuzz] configuring $BUILD ($CXX)"
cmake -S "$ROOT" -B "$BUILD" -G Ninja "${launcher[@]}" -DSKV_FUZZ=ON -DSKV_BUILD_TESTS=OFF \
  -DSKV_BUILD_TOOLS=OFF -DSKV_INSTALL=OFF >/dev/null
build_targets=()
for t in "${targets[@]}"; do build_targets+=("${t}_fuzz"); done
echo "[fuzz] building ${build_targets[*]}"
cmake --build "$BUILD" -j"${JOBS:-2}" --target "${build_targets[@]}"
((build_only)) && exit 0

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/skv-fuzz.XXXXXX")
symbolizer=$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)
[[ -n $symbolizer ]] && export ASAN_SYMBOLIZER_PATH=$symbolizer
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${targets[@]}"; do
  bin="$BUILD/tests/fuzz/${t}_fuzz"
  corpus="$SCRATCH/corpus/$t"
  artifacts="$SCRATCH/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  cp "$ROOT/tests/fuzz/corpus/$t/"* "$corpus/"
  log="$SCRATCH/$t.log"
  mapfile -t known < <(find "$ROOT/tests/fuzz/known" -name "$t-*" -type f 2>/dev/null | sort)
  if ((${#known[@]})); then
    if ! "$bin" "${known[@]}" >"$SCRATCH/$t.known.log" 2>&1; then
      failed+=("$t")
      echo "[fuzz] $t FAILED on a known regression input:"
      grep -E '^(==[0-9]+== ?ERROR|SUMMARY|fuzz check failed|Running: )|runtime error' \
        "$SCRATCH/$t.known.log" | tail -6 || true
      continue
    fi
    echo "[fuzz] $t: ${#known[@]} regression inputs pass"
  fi
  echo "[fuzz] $t: ${seconds}s, max_len $(max_len "$t")"
  rc=0
  "$bin" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  repro=$(find "$artifacts" -type f | head -1)
  if ((rc != 0)) || [[ -n $repro ]]; then
    failed+=("$t")
    echo "[fuzz] $t FAILED (exit $rc) after ${execs:-?} runs"
    grep -E '^(==[0-9]+== ?ERROR|SUMMARY|fuzz check failed|  \()|runtime error|Assertion' "$log" | head -6 || true
    echo "[fuzz]   log:        $log"
    if [[ -n $repro ]]; then
      echo "[fuzz]   reproducer: $repro"
      echo "[fuzz]   replay:     $bin $repro"
    fi
  else
    echo "[fuzz] $t ok: ${execs:-?} runs, ${speed:-?} exec/s, ${cov:-cov: ?}"
  fi
done

if ((${#failed[@]})); then
  echo "[fuzz] FAILED: ${failed[*]} (scratch folder kept: $SCRATCH)"
  exit 1
fi
if ((keep)); then
  echo "[fuzz] all passed; scratch folder kept: $SCRATCH"
else
  rm -rf "$SCRATCH"
  echo "[fuzz] all passed"
fi
