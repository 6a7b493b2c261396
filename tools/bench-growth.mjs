#!/usr/bin/env node
// The growth run (docs/benchmarks.md, "How costs grow with N"): the same skv_bench phases at
// several sizes N, with a block cache far smaller than the data, reporting throughput and memory
// per N for each engine, and how each engine's throughput changes as N grows.
//
//   node tools/bench-growth.mjs --bench build-bench/skv_bench [--ns 100000,1000000,5000000]
//        [--engines skv,rocksdb] [--cache-mib 8] [--rounds 1] [--markdown FILE] [--dir DIR]
//        [-- extra skv_bench options]
//
// tools/bench.sh --growth builds skv_bench and runs this. Batch phases move at most 100,000 rows
// at every N, and each 100-row scan runs 500 times, so the run's length grows with N only
// through the single-row phases. After the last phase each engine pauses 30 s with its database
// open (--settle-seconds), so "disk at rest" shows the space its background compaction gave back.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function usage(msg) {
  if (msg) console.error(`bench-growth: ${msg}`);
  console.error('usage: node tools/bench-growth.mjs --bench SKV_BENCH [--ns N,N,...] ' +
                '[--engines LIST] [--cache-mib M] [--rounds R] [--markdown FILE] [--dir DIR] ' +
                '[-- skv_bench options]');
  process.exit(2);
}

const opts = { ns: [100000, 1000000, 5000000], engines: 'skv,rocksdb', cacheMib: 8, rounds: 1,
               bench: null, markdown: null, dir: null, extra: [] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
  const positive = (v, what) => {
    if (!/^[1-9][0-9]*$/.test(v)) usage(`${what} takes positive integers, not '${v}'`);
    return Number(v);
  };
  if (a === '--') { opts.extra = argv.slice(i + 1); break; }
  else if (a === '--bench') opts.bench = next();
  else if (a === '--ns') opts.ns = next().split(',').map((v) => positive(v, '--ns'));
  else if (a === '--engines') opts.engines = next();
  else if (a === '--cache-mib') opts.cacheMib = positive(next(), '--cache-mib');
  else if (a === '--rounds') opts.rounds = positive(next(), '--rounds');
  else if (a === '--markdown') opts.markdown = next();
  else if (a === '--dir') opts.dir = next();
  else usage(`unknown option '${a}'`);
}
if (!opts.bench) usage('--bench is required');
try {
  fs.accessSync(opts.bench, fs.constants.X_OK);
} catch {
  usage(`${opts.bench} is not an executable`);
}
if (opts.ns.length === 0) usage('--ns is empty');
if (opts.dir !== null && !fs.statSync(opts.dir, { throwIfNoEntry: false })?.isDirectory()) {
  usage(`--dir ${opts.dir} is not a directory`);
}

const work = fs.mkdtempSync(path.join(opts.dir ?? os.tmpdir(), 'skv-bench-growth-'));
const reports = [];
try {
  for (const n of opts.ns) {
    const json = path.join(work, `n${n}.json`);
    const args = ['--n', String(n), '--engines', opts.engines, '--cache-mib', String(opts.cacheMib),
                  '--rounds', String(opts.rounds), '--batch-rows', String(Math.min(n, 100000)),
                  '--scan-repeats', '500', '--count-repeats', '1', '--settle-seconds', '30',
                  '--dir', path.join(work, 'db'), '--json', json, ...opts.extra];
    console.error(`[growth] N = ${n.toLocaleString('en-US')}: ${opts.bench} ${args.join(' ')}`);
    const r = spawnSync(opts.bench, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.error) throw r.error;
    if (r.status !== 0) throw new Error(`skv_bench exited with ${r.status} at N = ${n}`);
    reports.push({ n, report: JSON.parse(fs.readFileSync(json, 'utf8')) });
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

const PHASES = [['create', 'create'], ['read', 'read'], ['update', 'update'], ['delete', 'delete'],
                ['scan_pairs', 'scan: 100 pairs'], ['scan_count', 'scan: count all']];
const mib = (b) => (b == null ? '-' : `${(b / 1048576).toFixed(1)}`);
const num = (x) => (x == null ? '-' : x >= 100 ? Math.round(x).toLocaleString('en-US')
                                               : x.toPrecision(3));
const lines = [];
const out = (s = '') => lines.push(s);
const first = reports[0].report;
out(`Growth run: N = ${opts.ns.map((n) => n.toLocaleString('en-US')).join(', ')}; ` +
    `${first.config.clients} clients, sync ${first.config.sync ? 'on' : 'off'}, block cache ` +
    `${opts.cacheMib} MiB, ${opts.rounds} round(s) per N (median), batch phases ` +
    `${'min(N, 100,000)'} rows, 500 runs of each 100-row scan, 1 full count.`);
out(`Machine: ${first.machine.cpus} CPUs (${first.machine.cpu_model}), ${first.machine.kernel}.`);
const engines = first.engines.map((e) => e.name);
for (const name of engines) {
  out();
  out(`${name}: operations per second, and memory (MiB) and disk (MiB).`);
  out();
  out(`| N | ${PHASES.map(([, label]) => label).join(' | ')} | RSS after read | RSS at rest | ` +
      'peak RSS | disk at end | disk at rest |');
  out(`| ---: | ${PHASES.map(() => '---:').join(' | ')} | ---: | ---: | ---: | ---: | ---: |`);
  for (const { n, report } of reports) {
    const e = report.engines.find((x) => x.name === name);
    if (!e || e.error) {
      out(`| ${n.toLocaleString('en-US')} | ${e ? `error: ${e.error}` : 'not run'} |`);
      continue;
    }
    const phase = (id) => e.phases.find((p) => p.id === id);
    const last = e.phases[e.phases.length - 1];
    out(`| ${n.toLocaleString('en-US')} | ` +
        `${PHASES.map(([id]) => num(phase(id)?.ops_per_second)).join(' | ')} | ` +
        `${mib(phase('read')?.rss_after)} | ${mib(e.memory.rss_rest)} | ${mib(e.memory.rss_peak)} | ` +
        `${mib(last?.disk_after)} | ${mib(e.memory.disk_rest)} |`);
  }
}
if (reports.length > 1) {
  out();
  out(`Throughput at each N as a share of the same engine's at N = ` +
      `${opts.ns[0].toLocaleString('en-US')} (1.00 = no slower as the data grows).`);
  out();
  out(`| engine | N | ${PHASES.map(([, label]) => label).join(' | ')} |`);
  out(`| --- | ---: | ${PHASES.map(() => '---:').join(' | ')} |`);
  for (const name of engines) {
    const base = reports[0].report.engines.find((x) => x.name === name);
    for (const { n, report } of reports.slice(1)) {
      const e = report.engines.find((x) => x.name === name);
      if (!e || e.error || !base || base.error) continue;
      const ratio = (id) => {
        const a = e.phases.find((p) => p.id === id)?.ops_per_second;
        const b = base.phases.find((p) => p.id === id)?.ops_per_second;
        return a && b ? (a / b).toFixed(2) : '-';
      };
      out(`| ${name} | ${n.toLocaleString('en-US')} | ${PHASES.map(([id]) => ratio(id)).join(' | ')} |`);
    }
  }
}
const text = lines.join('\n') + '\n';
process.stdout.write(text);
if (opts.markdown) fs.writeFileSync(opts.markdown, text);
