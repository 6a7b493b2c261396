// The value log in the browser (docs/web.md, "The value log"):
//  - a versioned database with the value log on (threshold 256 bytes, values of 1 to 4 KiB),
//    written through the worker API with several versions per key (commits now, setAt in the
//    past, deletes), flushed and compacted (which drops old versions and leaves garbage in the
//    value log), garbage collected with collectVlogGarbage(), given more writes that stay in
//    the WAL, and reopened: getAt, history and rangeAt answer the same before and after the
//    collection, after the reopen, after a page reload through the client opened without the
//    option, and with the native skv tool on the files exportFiles() copied out;
//  - bad valueLog options are invalid_argument by name at every boundary (client, worker API,
//    wasm glue) and create nothing; the edge values open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../server.mjs';
import { usePage } from '../page.mjs';

const SKV = path.join(path.resolve(ROOT, process.env.SKV_NATIVE_BUILD || 'build'), 'skv');
const LIMIT = { timeout: 240_000 };

const browser = usePage();

async function inWorker(args) {
  const r = await browser.page.evaluate((a) => window.runWorker('value-log-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

// The first difference between two answer objects, for a readable failure.
function firstDifference(a, b, where = '') {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${where}.${k}`);
      if (d) return d;
    }
  }
  return `${where}: ${JSON.stringify(a)?.slice(0, 200)} != ${JSON.stringify(b)?.slice(0, 200)}`;
}

function assertSame(got, want, what) {
  const d = firstDifference(got, want);
  assert.equal(d, null, `${what}: ${d}`);
}

function skv(...args) {
  return spawnSync(SKV, args, { encoding: 'latin1', maxBuffer: 64 << 20 });
}

function skvOk(...args) {
  const r = skv(...args);
  assert.equal(r.status, 0, `skv ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const lines = (list) => list.map((l) => `${l}\n`).join('');

// Runs in the page: the answers through the main-thread client, opened without the option,
// then a garbage collection through it (nothing left to do) and its counters.
async function clientAnswers({ name, times }) {
  const data = await import('/e2e/pages/value-log-data.js');
  const db = await window.skv.open(name, { createIfMissing: false });
  try {
    const answers = await data.answers(db, times);
    await db.collectVlogGarbage();
    const s = await db.stats();
    return { answers, vlogFiles: s.vlogFiles, vlogGcRuns: s.vlogGcRuns };
  } finally {
    await db.close();
  }
}

test('value log: versions through GC, a reopen, a reload and the native tool', {
  ...LIMIT, skip: !fs.existsSync(SKV) && `no native tool at ${SKV} (cmake --build build)`,
}, async () => {
  const name = 'vlog-versions';
  const w = await inWorker({ phase: 'write', name });
  const { compacted, collected, again, reopened } = w.stats;
  console.log(`counters: compacted ${JSON.stringify(compacted)}, collected ` +
    `${JSON.stringify(collected)}, reopened ${JSON.stringify(reopened)}`);
  assert.ok(compacted.vlogFiles > 1, 'values were separated into several value log files');
  assert.ok(compacted.vlogGarbageBytes > 0 || compacted.vlogGcRuns > 0,
    'compaction dropped versions whose values stay in the value log');
  assert.ok(collected.vlogGcRuns > 0 && collected.vlogGcBytesMoved > 0,
    'garbage collection rewrote value log files');
  assert.ok(collected.vlogGarbageBytes <= collected.vlogBytes / 2,
    'no file left at or over the ratio');
  assert.equal(again.vlogGcRuns, collected.vlogGcRuns, 'a second collection has nothing to do');
  assert.ok(reopened.vlogFiles > 0, 'the value log after the reopen');
  assertSame(w.collected, w.before, 'the answers after garbage collection');

  const vlogs = w.files.map(([f]) => f).filter((f) => f.endsWith('.vlog'));
  assert.ok(vlogs.length >= reopened.vlogFiles, `value log files exported: ${vlogs}`);
  for (const f of vlogs) assert.match(f, /^\d{6,}\.vlog$/, 'a value log file name');

  await browser.page.reload();
  await browser.page.waitForFunction(() => window.ready === true);
  const client = await browser.page.evaluate(clientAnswers, { name, times: w.times });
  assertSame(client.answers, w.reopened, 'the client after a reload, without the option');
  assert.equal(client.vlogFiles, reopened.vlogFiles, 'the client sees the same value log files');
  const read = await inWorker({ phase: 'read', name, times: w.times });
  assertSame(read.answers, w.reopened, 'the worker API without the option');

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skv-e2e-vlog-'));
  try {
    for (const [file, bytes] of w.files) {
      assert.match(file, /^[A-Za-z0-9._-]+$/, 'a plain file name');
      fs.writeFileSync(path.join(dir, file), Buffer.from(bytes, 'base64'));
    }
    const stats = skvOk('stats', dir);
    assert.match(stats, /^versioning +on, retention_ns 3600000000000$/m, 'versioned, as stored');
    assert.match(stats, new RegExp(`^vlog_files +${reopened.vlogFiles}$`, 'm'),
      `the tool counts the value log files: ${stats}`);
    assert.match(stats, new RegExp(`^vlog_bytes +${reopened.vlogBytes}$`, 'm'), 'vlog_bytes');
    const data = await import('../pages/value-log-data.js');
    const a = w.reopened;
    for (const k of data.KEYS) {
      assert.equal(skvOk('history', dir, k), lines(a.history[k]), `history ${k}`);
      assert.equal(skvOk('history', dir, k, '--tombstones'), lines(a.tombstones[k]),
        `history ${k} --tombstones`);
    }
    let gets = 0;
    for (const t of w.times) {
      for (const k of data.KEYS) {
        const r = skv('get-at', dir, k, t);
        const want = a.getAt[t][k];
        if (want === null) {
          assert.equal(r.status, 1, `get-at ${k} ${t}: ${r.stdout.slice(0, 100)}`);
          assert.match(r.stderr, /not_found/, `get-at ${k} ${t}`);
        } else {
          assert.equal(r.status, 0, `get-at ${k} ${t}: ${r.stderr}`);
          assert.equal(r.stdout, `${want}\n`, `get-at ${k} ${t}`);
        }
        gets++;
      }
      assert.equal(skvOk('scan', dir, '--at', t), lines(a.forward[t]), `scan --at ${t}`);
      assert.equal(skvOk('scan', dir, '--at', t, '--reverse'), lines(a.backward[t]),
        `scan --at ${t} --reverse`);
    }
    console.log(`native: ${vlogs.length} value log files; ${data.KEYS.length * 2} histories, ` +
      `${gets} get-at and ${w.times.length * 2} scans agree with the browser`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('value log: garbage collection runs in the background, in the worker\'s steps', LIMIT,
  async () => {
    const r = await inWorker({ phase: 'background', name: 'vlog-background' });
    console.log(`background: ${JSON.stringify(r)}`);
    assert.equal(r.right, 400, 'every key reads its newest value');
    assert.ok(r.stats.vlogGcRuns > 0 && r.stats.vlogGcBytesMoved > 0,
      'the pump ran a garbage collection with no call asking for it');
    assert.ok(r.compactions >= 2 && r.compactionSteps > r.compactions,
      'the compaction and the collection ran in several steps');
    assert.ok(r.pumpSteps > r.compactionSteps, 'each step a task of the pump');
    // A step's budget (compactionStepBytes 4096) counts the 2 KiB values a collection copies: no
    // step copies much more than its budget plus one value.
    assert.ok(r.compactionSteps * (4096 + 2200) >= r.stats.vlogGcBytesMoved,
      `${r.stats.vlogGcBytesMoved} bytes copied in ${r.compactionSteps} steps`);
  });

test('client: bad valueLog options are invalid_argument by name and create nothing', LIMIT,
  async () => {
    const r = await browser.page.evaluate(async () => {
      const { badValueLogOptions } = await import('/e2e/pages/value-log-bad.js');
      const { open, listDatabases } = window.skv;
      const options = {};
      for (const [what, o, shown] of badValueLogOptions()) {
        try {
          await open('client-vlog-option', o);
          options[what] = { code: 'opened' };
        } catch (e) {
          options[what] = { code: e.code, named: e.message.includes(shown), message: e.message };
        }
      }
      const listed = (await listDatabases()).filter((n) => n.startsWith('client-vlog-option'));
      return { options, listed };
    });
    for (const [what, got] of Object.entries(r.options)) {
      assert.equal(got.code, 'invalid_argument', `client: ${what}: ${got.message}`);
      assert.ok(got.named, `client: ${what}: the message shows the value: ${got.message}`);
    }
    assert.deepEqual(r.listed, [], 'a refused open creates nothing');
  });

test('worker API and wasm glue: bad valueLog options are refused, edge values open', LIMIT,
  async () => {
    const r = await inWorker({ phase: 'bad', name: 'worker-vlog' });
    for (const [what, got] of Object.entries(r.options)) {
      assert.equal(got.code, 'invalid_argument', `worker: ${what}: ${got.message}`);
      assert.ok(got.named, `worker: ${what}: the message shows the value: ${got.message}`);
    }
    assert.deepEqual(r.listed, [], 'a refused open creates nothing');
    assert.deepEqual(r.good, {
      default: 'true 1', on: 'true 1', off: 'true 0',
      empty: 'true 1', smallest: 'true 1', largest: 'true 0', plain: '0 0',
    }, 'the edge values open; only values at or over the threshold are separated, by default too');
    const { glue } = r;
    console.log(`glue messages: ${JSON.stringify(glue.messages)}`);
    const { badValueLogOptions } = await import('../pages/value-log-bad.js');
    for (const [what, , , want = 'invalid_argument'] of badValueLogOptions()) {
      assert.equal(glue.options[what], want, `glue: ${what}: ${glue.messages[what]}`);
    }
    assert.deepEqual(Object.keys(glue.tally).sort(), ['invalid_argument', 'not_found'],
      `glue: only error codes, never an exception: ${JSON.stringify(glue.tally)}`);
    assert.equal(glue.closedGc, 'closed');
  });
