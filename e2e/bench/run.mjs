// The browser benchmark (docs/benchmarks.md, "Browser"): runs the native harness's crud-bench
// style phases in a module worker of headless Chromium against skv on OPFS, raw IndexedDB and
// @sqlite.org/sqlite-wasm on its opfs-sahpool VFS, one engine after the other, each in a fresh
// browser profile; prints a Markdown report and optionally writes it and a JSON file.
//
//   npm run bench:web -- [options]        (or: node e2e/bench/run.mjs [options])
//
// Exit status: 0 every engine completed, 1 one failed (the others are still reported), 2 bad
// usage or missing prerequisites.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { launch, newProfile, removeProfile, CHROMIUM } from '../browser.mjs';
import { ROOT } from '../server.mjs';
import { startServer } from './server.mjs';
import { renderRun, ratios, rate } from './report.mjs';
import { startTrace, summarize } from './profile.mjs';
import { PHASE_IDS } from './workload.js';

const USAGE = `usage: npm run bench:web -- [options]

  --n N                rows of the single-row phases (default 50000)
  --clients C          concurrent async clients in the worker (default 16)
  --engines LIST       comma-separated: skv,idb,sqlite (default: all, in that order), and
                       skv-xchacha (skv with every file sealed, docs/encryption.md),
                       skv-inline (skv with valueLog: false: values in the tables)
  --sync on|off|both   durable commits (default off; both runs on, then off)
  --cache-mib M        skv's block cache and sqlite's page cache (default 16)
  --batch-rows R       rows written, read, ... by each batch phase (default N)
  --scan-repeats S     runs of each 100-row scan (default 200)
  --count-repeats S    runs of the full count (default 4)
  --sqlite-journal J   wal (default; with locking_mode=EXCLUSIVE) or delete
  --settle-phases on|off  after each phase, wait until skv's flushes and compactions are
                       done before the next (default on; sqlite-wasm and IndexedDB have none)
  --no-coi             serve without cross-origin isolation (timers step 100 µs, not 5 µs)
  --smoke              a tiny run for CI: N = 500, 4 clients, 5 scans, sync on
  --markdown FILE      also write the report to FILE
  --json FILE          write every figure as JSON to FILE
  --quiet              no per-phase progress on stderr
  --profile PHASE      sample the worker's CPU during PHASE (an id of the JSON, such as
                       update or scan_skip_keys) for each engine and sync setting; prints the
                       top functions and writes the Chrome trace to
                       DIR/<engine>-sync-<on|off>-<PHASE>.trace.json. Wasm functions are
                       named in a build made with SKV_WEB_PROFILING=1 tools/build-web.sh
  --profile-dir DIR    where --profile writes its traces (default: the current folder)
`;

function usageError(message) {
  process.stderr.write(`bench:web: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseFlags(argv) {
  const c = {
    n: 50000, clients: 16, engines: ['skv', 'idb', 'sqlite'], sync: ['off'], cacheMiB: 16,
    batchRows: 0, scanRepeats: 200, countRepeats: 4, sqliteJournal: 'wal', coi: true,
    settlePhases: true, profile: null, profileDir: '.',
    markdown: null, json: null, quiet: false,
  };
  const num = (flag, v) => {
    if (v === undefined || !/^\d+$/.test(v)) usageError(`${flag} wants a number`);
    return Number(v);
  };
  const explicit = new Set();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i];
    explicit.add(a);
    switch (a) {
      case '--help': case '-h': process.stdout.write(USAGE); process.exit(0); break;
      case '--n': c.n = num(a, value()); break;
      case '--clients': c.clients = num(a, value()); break;
      case '--engines': c.engines = String(value() || '').split(',').filter(Boolean); break;
      case '--sync': {
        const v = value();
        if (v === 'on') c.sync = ['on'];
        else if (v === 'off') c.sync = ['off'];
        else if (v === 'both') c.sync = ['on', 'off'];
        else usageError('--sync wants on, off or both');
        break;
      }
      case '--cache-mib': c.cacheMiB = num(a, value()); break;
      case '--batch-rows': c.batchRows = num(a, value()); break;
      case '--scan-repeats': c.scanRepeats = num(a, value()); break;
      case '--count-repeats': c.countRepeats = num(a, value()); break;
      case '--sqlite-journal': {
        c.sqliteJournal = value();
        if (!['wal', 'delete'].includes(c.sqliteJournal)) usageError('--sqlite-journal wants wal or delete');
        break;
      }
      case '--settle-phases': {
        const v = value();
        if (v !== 'on' && v !== 'off') usageError('--settle-phases wants on or off');
        c.settlePhases = v === 'on';
        break;
      }
      case '--profile': {
        c.profile = value();
        if (!PHASE_IDS.includes(c.profile)) usageError(`--profile wants a phase: ${PHASE_IDS.join(', ')}`);
        break;
      }
      case '--profile-dir': {
        c.profileDir = value();
        if (!c.profileDir) usageError('--profile-dir wants a folder');
        if (!fs.existsSync(c.profileDir) || !fs.statSync(c.profileDir).isDirectory()) {
          usageError(`--profile-dir: ${c.profileDir} is not a folder`);
        }
        break;
      }
      case '--no-coi': c.coi = false; break;
      case '--smoke': c.smoke = true; break;
      case '--markdown': c.markdown = value(); break;
      case '--json': c.json = value(); break;
      case '--quiet': c.quiet = true; break;
      default: usageError(`unknown option ${a}`);
    }
  }
  if (c.smoke) {
    if (!explicit.has('--n')) c.n = 500;
    if (!explicit.has('--clients')) c.clients = 4;
    if (!explicit.has('--scan-repeats')) c.scanRepeats = 5;
    if (!explicit.has('--count-repeats')) c.countRepeats = 1;
    if (!explicit.has('--sync')) c.sync = ['on'];
  }
  if (c.n < 1 || c.n > 100000000) usageError('--n must be between 1 and 100000000');
  if (c.clients < 1 || c.clients > 1024) usageError('--clients must be between 1 and 1024');
  if (c.engines.length === 0) usageError('--engines is empty');
  for (const e of c.engines) {
    if (!['skv', 'skv-xchacha', 'skv-inline', 'idb', 'sqlite'].includes(e)) usageError(`unknown engine ${e}`);
  }
  return c;
}

function describeEnvironment() {
  const cpus = os.cpus();
  let browser = CHROMIUM;
  try {
    browser = execFileSync(CHROMIUM, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString().trim().split('\n').pop();
  } catch { /* keep the path */ }
  return {
    browser,
    machine: `${cpus.length} CPUs (${cpus[0] ? cpus[0].model : '?'}), ` +
      `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()} ${os.arch()}, ` +
      `Node ${process.version}`,
  };
}

// Writes `events` as a Chrome trace file in pieces of about 1 MB: a long phase's trace can
// exceed the longest string JSON.stringify may build.
function writeTrace(file, events) {
  const fd = fs.openSync(file, 'w');
  try {
    let chunk = '{"traceEvents":[\n';
    for (let i = 0; i < events.length; i++) {
      chunk += (i > 0 ? ',\n' : '') + JSON.stringify(events[i]);
      if (chunk.length > 1 << 20) {
        fs.writeSync(fd, chunk);
        chunk = '';
      }
    }
    fs.writeSync(fd, `${chunk}\n]}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

async function runEngine(server, key, config, sync) {
  const profile = newProfile();
  const { context, page } = await launch(profile);
  try {
    await page.exposeFunction('benchProgress', (json) => {
      if (config.quiet) return;
      const p = JSON.parse(json);
      if (p.opened) {
        process.stderr.write(`[${key} sync ${sync}] opened in ${p.ms.toFixed(0)} ms\n`);
      } else {
        process.stderr.write(`[${key} sync ${sync}] ${p.id}: ${p.ops} ops in ` +
          `${p.seconds.toFixed(2)} s, ${rate(p.ops_per_second)} ops/s` +
          `${p.misses ? `, ${p.misses} short` : ''}` +
          `${p.settle_ms !== undefined ? `, settled in ${p.settle_ms.toFixed(0)} ms` : ''}\n`);
      }
    });
    if (config.profile) {
      const cdp = await context.newCDPSession(page);
      let trace = null;
      await page.exposeFunction('benchProfile', async (what) => {
        if (what === 'start') {
          trace = await startTrace(cdp);
          return;
        }
        if (what !== 'stop' || !trace) return;
        const events = await trace.stop();
        trace = null;
        const file = path.join(config.profileDir, `${key}-sync-${sync}-${config.profile}.trace.json`);
        writeTrace(file, events);
        process.stderr.write(`[${key} sync ${sync}] profile of ${config.profile}, trace in ${file}:\n` +
          summarize(events).map((l) => `  ${l}\n`).join(''));
      });
    }
    await page.goto(`${server.origin}/e2e/bench/index.html`);
    await page.waitForFunction(() => window.ready === true);
    const args = {
      engine: key, n: config.n, clients: config.clients, sync: sync === 'on',
      cacheMiB: config.cacheMiB, batchRows: config.batchRows, scanRepeats: config.scanRepeats,
      countRepeats: config.countRepeats, sqliteJournal: config.sqliteJournal,
      settlePhases: config.settlePhases, profilePhase: config.profile,
    };
    const r = await page.evaluate((a) => window.runEngine(a), args);
    if (r.error) return { key, name: key, error: r.error.message, phases: [], stack: r.error.stack };
    return r.result;
  } finally {
    await context.close();
    removeProfile(profile);
  }
}

async function main() {
  const config = parseFlags(process.argv.slice(2));
  for (const f of ['web/dist/skv-core.mjs', 'web/dist/skv-core.wasm']) {
    if (config.engines.some((e) => e.startsWith('skv')) && !fs.existsSync(path.join(ROOT, f))) {
      console.error(`bench:web: ${f} is missing; run 'npm run build' first`);
      process.exit(2);
    }
  }
  if (config.engines.includes('sqlite') &&
      !fs.existsSync(path.join(ROOT, 'node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs'))) {
    console.error("bench:web: @sqlite.org/sqlite-wasm is missing; run 'npm install' first");
    process.exit(2);
  }
  if (!fs.existsSync(CHROMIUM)) {
    console.error(`bench:web: no browser at ${CHROMIUM} (apt-get install chromium, or set SKV_CHROMIUM)`);
    process.exit(2);
  }
  const env = describeEnvironment();
  const server = await startServer({ coi: config.coi });
  const runs = [];
  let failed = false;
  try {
    for (const sync of config.sync) {
      const engines = [];
      for (const key of config.engines) {
        const t0 = Date.now();
        const e = await runEngine(server, key, config, sync);
        if (e.error) {
          failed = true;
          process.stderr.write(`[${key} sync ${sync}] FAILED: ${e.error}\n${e.stack || ''}\n`);
        } else if (!config.quiet) {
          process.stderr.write(`[${key} sync ${sync}] done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
        }
        engines.push(e);
      }
      runs.push({ sync: sync === 'on', engines });
    }
  } finally {
    await server.close();
  }
  const first = runs.flatMap((r) => r.engines).find((e) => e.env);
  if (first) {
    env.crossOriginIsolated = first.env.crossOriginIsolated;
    env.timerStepMs = first.env.timerStepMs;
    env.userAgent = first.env.userAgent;
  }
  const markdown = runs.map((r) => renderRun(r, config, env)).join('\n');
  process.stdout.write(markdown);
  if (config.markdown) fs.writeFileSync(config.markdown, markdown);
  if (config.json) {
    const json = {
      config: {
        n: config.n, clients: config.clients, cache_mib: config.cacheMiB,
        batch_rows: config.batchRows || config.n, scan_repeats: config.scanRepeats,
        count_repeats: config.countRepeats, sqlite_journal: config.sqliteJournal,
        settle_phases: config.settlePhases,
        cross_origin_isolated: config.coi,
      },
      environment: env,
      runs: runs.map((r) => ({ sync: r.sync, engines: r.engines, skv_over: ratios(r.engines) })),
    };
    fs.writeFileSync(config.json, JSON.stringify(json, null, 2) + '\n');
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
