// Versioned queries in the browser (docs/web.md, "Versioned queries"):
//  - a versioned database written through the worker API (commits at the time now, setAt in the
//    past, deletes, tables on two levels and data only in the WAL) answers getAt, history,
//    rangeAt both ways and scanAt the same after a page reload, through the client opened
//    without the versioning option and through the worker API again;
//  - the same database copied out with exportFiles() opens with the native skv tool, whose
//    history, get-at and scan --at print exactly what the browser answered.
// Bad input to the versioned calls: versioning-boundary.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, ROOT } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

const SKV = path.join(path.resolve(ROOT, process.env.SKV_NATIVE_BUILD || 'build'), 'skv');
const LIMIT = { timeout: 120_000 };

async function inWorker(page, args) {
  const r = await page.evaluate((a) => window.runWorker('versioning-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

// Runs in the page: the answers through the main-thread client, opened without the option.
async function clientAnswers({ name, times }) {
  const data = await import('/e2e/pages/versioning-data.js');
  const db = await window.skv.open(name, { createIfMissing: false });
  try {
    return await data.answers(db, times);
  } finally {
    await db.close();
  }
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
  return `${where}: ${JSON.stringify(a)?.slice(0, 300)} != ${JSON.stringify(b)?.slice(0, 300)}`;
}

function assertSame(got, want, what) {
  const d = firstDifference(got, want);
  assert.equal(d, null, `${what}: ${d}`);
}

test('history survives a page reload: the same answers through both APIs', LIMIT, async () => {
  const server = await startServer();
  const profile = newProfile();
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    const name = 'versions-reload';
    const written = await inWorker(page, { phase: 'write', name });
    console.log(`written: ${written.times.length} question times, levels ` +
      `${JSON.stringify(written.filesPerLevel)}, memtable ${written.memtableBytes} bytes; ` +
      `doc: ${JSON.stringify(written.answers.tombstones.doc)}`);
    assert.ok(written.filesPerLevel.slice(1).some((n) => n > 0), 'tables below level 0');
    assert.ok(written.memtableBytes > 0, 'some versions only in the WAL');

    await page.reload();
    await page.waitForFunction(() => window.ready === true);
    const client = await page.evaluate(clientAnswers, { name, times: written.times });
    assertSame(client, written.answers, 'the client after the reload');
    const again = await inWorker(page, { phase: 'read', name, times: written.times });
    assertSame(again.answers, written.answers, 'the worker API after the reload');
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
});

function skv(...args) {
  return spawnSync(SKV, args, { encoding: 'latin1', maxBuffer: 64 << 20 });
}

function skvOk(...args) {
  const r = skv(...args);
  assert.equal(r.status, 0, `skv ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const lines = (list) => list.map((l) => `${l}\n`).join('');

// `valueLog`: the open option the browser writes the database with (undefined: none).
async function nativeAgrees(valueLog) {
  const server = await startServer();
  const profile = newProfile();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skv-e2e-versions-'));
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    const data = await import('../pages/versioning-data.js');
    const { times, answers, files, vlogFiles } = await inWorker(page,
      { phase: 'write', name: 'versions-native', files: true, valueLog });
    for (const [file, bytes] of files) {
      assert.match(file, /^[A-Za-z0-9._-]+$/, 'a plain file name');
      fs.writeFileSync(path.join(dir, file), Buffer.from(bytes, 'base64'));
    }
    const stats = skvOk('stats', dir);
    assert.match(stats, /^versioning +on, retention_ns 0$/m,
      'the tool opens it versioned, as stored');
    const exportedVlogs = files.filter(([f]) => f.endsWith('.vlog')).length;
    if (valueLog) {
      assert.ok(vlogFiles > 0 && exportedVlogs > 0,
        `the browser separated values: ${vlogFiles} value logs, ${exportedVlogs} exported`);
      const native = Number(/^vlog_files +(\d+)$/m.exec(stats)?.[1]);
      assert.ok(native > 0, `the tool sees the value logs: ${stats}`);
      console.log(`value log: ${vlogFiles} files in the browser, ${exportedVlogs} exported, ` +
        `${native} live natively`);
    } else {
      assert.equal(exportedVlogs, 0, 'no value log without the option');
    }
    const cliKey = (k) => (k === 'bin' ? data.escape(data.BIN_KEY) : k);
    for (const k of data.KEYS) {
      assert.equal(skvOk('history', dir, cliKey(k)), lines(answers.history[k]), `history ${k}`);
      assert.equal(skvOk('history', dir, cliKey(k), '--tombstones'),
        lines(answers.tombstones[k]), `history ${k} --tombstones`);
      assert.equal(skvOk('history', dir, cliKey(k), '--limit', '2'), lines(answers.limited[k]),
        `history ${k} --limit 2`);
    }
    let gets = 0;
    for (const t of times) {
      for (const k of data.KEYS) {
        const r = skv('get-at', dir, cliKey(k), t);
        const want = answers.getAt[t][k];
        if (want === null) {
          assert.equal(r.status, 1, `get-at ${k} ${t}: ${r.stdout}`);
          assert.match(r.stderr, /not_found/, `get-at ${k} ${t}`);
        } else {
          assert.equal(r.status, 0, `get-at ${k} ${t}: ${r.stderr}`);
          assert.equal(r.stdout, `${want}\n`, `get-at ${k} ${t}`);
        }
        gets++;
      }
      const at = answers.at[t];
      assert.equal(skvOk('scan', dir, '--at', t), lines(at.forward), `scan --at ${t}`);
      assert.equal(skvOk('scan', dir, '--at', t, '--reverse'), lines(at.backward),
        `scan --at ${t} --reverse`);
      assert.equal(skvOk('scan', dir, '--at', t, '--keys-only', '--start', 'doc', '--end',
        'f/0100'), lines(at.keys), `scan --at ${t} --keys-only`);
    }
    console.log(`native: ${data.KEYS.length * 3} histories, ${gets} get-at and ` +
      `${times.length * 3} scans agree with the browser`);
  } finally {
    await context.close();
    removeProfile(profile);
    fs.rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

const NATIVE = { ...LIMIT, skip: !fs.existsSync(SKV) && `no native tool at ${SKV} (cmake --build build)` };

test('a versioned browser database answers the same with the native skv tool', NATIVE,
  () => nativeAgrees(undefined));

test('with the value log on too, the native skv tool reads the separated values the same',
  NATIVE, () => nativeAgrees({ threshold: 8, maxFileSize: 4096, gcRatio: 0.3 }));
