#!/usr/bin/env bash
# A/B comparison of two builds of skv_bench: the engine before a change against the engine after
# it, run alternately in one session so both see the same machine (docs/benchmarks.md).
#
#   tools/bench-ab.sh BEFORE AFTER [--rounds R] [skv_bench options]
#
# BEFORE and AFTER are skv_bench binaries (copy build-bench/skv_bench aside before the change).
# Each round runs both once, in alternating order (before first in odd rounds); every run is
# `--engines skv` unless the options name other engines. Prints, per phase, the median ops/s of
# each binary over the rounds and their ratio after / before.
set -euo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
before=$1 after=$2
shift 2
for b in "$before" "$after"; do
  [[ -x "$b" ]] || { echo "bench-ab: $b is not an executable" >&2; exit 2; }
done
rounds=3
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --rounds=*) rounds=${1#*=}; shift ;;
    --json|--markdown|--dir) echo "bench-ab: $1 is chosen by this script" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench-ab: --rounds takes a positive integer" >&2; exit 2; }
engines=(--engines skv)
for a in "${args[@]}"; do [[ $a == --engines* || $a == --encryption* ]] && engines=(); done
work=$(mktemp -d "${TMPDIR:-/tmp}/skv-bench-ab.XXXXXX")
trap 'rm -rf "$work"' EXIT
run() { # <binary> <label> <round>
  echo "round $3: $2" >&2
  "$1" "${engines[@]}" "${args[@]}" --dir "$work/db" --json "$work/$2.$3.json" > "$work/$2.$3.log"
}
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2 == 1)); then
    run "$before" before "$r"; run "$after" after "$r"
  else
    run "$after" after "$r"; run "$before" before "$r"
  fi
done
node - "$work" "$rounds" <<'JS'
const fs = require('fs');
const [dir, rounds] = [process.argv[2], Number(process.argv[3])];
const figures = {};  // engine/phase -> {before: [], after: []}
const order = [];
const add = (id, side, x) => {
  if (!figures[id]) { figures[id] = {before: [], after: []}; order.push(id); }
  figures[id][side].push(x);
};
const MiB = 1024 * 1024;
for (const side of ['before', 'after']) {
  for (let r = 1; r <= rounds; r++) {
    const report = JSON.parse(fs.readFileSync(`${dir}/${side}.${r}.json`, 'utf8'));
    for (const e of report.engines) {
      if (e.error) throw new Error(`${side} round ${r}: ${e.name}: ${e.error}`);
      for (const p of e.phases) add(`${e.name} | ${p.id}`, side, p.ops_per_second);
      // What the run cost besides time, in MiB (lower is better here).
      const last = e.phases[e.phases.length - 1];
      add(`${e.name} | MiB: resident at rest`, side, e.memory.rss_rest / MiB);
      add(`${e.name} | MiB: resident at peak`, side, e.memory.rss_peak / MiB);
      add(`${e.name} | MiB: largest directory after a phase`, side,
        Math.max(...e.phases.map((p) => p.disk_after)) / MiB);
      add(`${e.name} | MiB: directory at rest`, side, e.memory.disk_rest / MiB);
      if (last) add(`${e.name} | MiB: written to disk`, side, last.disk_written_total / MiB);
    }
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (x) => x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(3);
console.log(`${rounds} rounds, binaries alternating; median ops/s per phase, then median MiB.\n`);
console.log('| engine | phase | before | after | after / before |');
console.log('| --- | --- | ---: | ---: | ---: |');
for (const id of order) {
  const f = figures[id];
  if (f.before.length !== rounds || f.after.length !== rounds) continue;
  const b = median(f.before), a = median(f.after);
  console.log(`| ${id} | ${fmt(b)} | ${fmt(a)} | ${(a / b).toFixed(2)} |`);
}
JS
