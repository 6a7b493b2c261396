// Checkpoints and importFiles() in the browser (docs/web.md, "Checkpoints and imports"):
//  - databases the native skv tool wrote (plaintext, and encrypted with its key) are read from
//    disk here, handed to the page and imported; every key reads back as the tool prints it. Bad
//    sets (no CURRENT, a truncated table, no manifest, LOCK, ../x, a name that exists, an
//    encrypted set without its key) are refused by name and leave no directory behind;
//  - a checkpoint taken while commits go on in the same worker holds every commit acknowledged
//    before the call and a prefix of the rest, survives a reload, and its export opens with the
//    native tool; a checkpoint into a name that exists, is open, or is locked elsewhere is
//    refused by name and changes nothing;
//  - the checkpoint of an encrypted database needs the key to open.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../server.mjs';
import { usePage } from '../page.mjs';

const SKV = path.join(path.resolve(ROOT, process.env.SKV_NATIVE_BUILD || 'build'), 'skv');
const LIMIT = { timeout: 240_000 };
const KEY = '3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff00f1e2d';
const WRONG = 'ffeeddccbbaa99887766554433221100f0e1d2c3b4a5968778695a4b3c2d1e0f';
const noTool = !fs.existsSync(SKV) && `no native tool at ${SKV} (cmake --build build)`;

const harness = usePage();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'skv-e2e-checkpoint-'));
const keyFile = path.join(tmp, 'key');
fs.writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function skv(...args) {
  const r = spawnSync(SKV, args, { encoding: 'buffer', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `skv ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

// The tool's scan in hex (`skv scan --hex`), which says byte for byte what it read.
const scanText = (entries) => entries.map(([k, v]) =>
  `${Buffer.from(k, 'base64').toString('hex')}\t${Buffer.from(v, 'base64').toString('hex')}\n`)
  .join('');

// A database written by the native tool: the demo's users, a table of 40 more keys, and 10 keys
// only in the WAL. Returns its files (LOCK, the native lock file, left out) and the tool's scan.
function nativeDatabase(name, keyArgs) {
  const dir = path.join(tmp, name);
  skv('demo', dir, ...keyArgs);
  for (let i = 0; i < 50; i++) {
    skv('set', dir, `native/${String(i).padStart(3, '0')}`, `value\\x00${i}`, ...keyArgs);
    if (i === 39) skv('flush', dir, ...keyArgs);
  }
  const names = fs.readdirSync(dir).sort();
  assert.ok(names.includes('LOCK') && names.some((n) => n.endsWith('.sst')) &&
    names.some((n) => n.endsWith('.wal')), `native files: ${names.join(' ')}`);
  const files = names.filter((n) => n !== 'LOCK')
    .map((n) => [n, fs.readFileSync(path.join(dir, n)).toString('base64')]);
  return { dir, files, scan: skv('scan', dir, '--hex', ...keyArgs).toString('latin1') };
}

async function inWorker(args) {
  const r = await harness.page.evaluate((a) => window.runWorker('checkpoint-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

test('importFiles: native databases import and read back; bad sets are refused by name and ' +
  'leave nothing', { ...LIMIT, skip: noTool }, async () => {
  const plain = nativeDatabase('native-plain', []);
  const sealed = nativeDatabase('native-sealed', ['--key-file', keyFile]);
  const without = (files, name) => files.filter(([n]) => n !== name);
  const table = plain.files.filter(([n]) => n.endsWith('.sst'))
    .sort((a, b) => b[1].length - a[1].length)[0];
  const truncated = plain.files.map(([n, b]) => (n === table[0]
    ? [n, Buffer.from(b, 'base64').subarray(0, Buffer.from(b, 'base64').length >> 1)
      .toString('base64')] : [n, b]));
  const manifest = plain.files.find(([n]) => n.startsWith('MANIFEST-'))[0];
  const sets = [
    { what: 'native', name: 'imp-native', files: plain.files },
    { what: 'native, encrypted', name: 'imp-sealed', files: sealed.files, options: 'key' },
    { what: 'encrypted, no key', name: 'imp-bad-nokey', files: sealed.files },
    { what: 'plaintext, a key', name: 'imp-bad-key', files: plain.files, options: 'key' },
    { what: 'no CURRENT', name: 'imp-bad-current', files: without(plain.files, 'CURRENT') },
    { what: 'truncated table', name: 'imp-bad-table', files: truncated },
    { what: 'no manifest', name: 'imp-bad-manifest', files: without(plain.files, manifest) },
    { what: 'LOCK', name: 'imp-bad-lock', files: [...plain.files, ['LOCK', '']] },
    { what: '../x', name: 'imp-bad-path', files: [...plain.files, ['../x', 'eA==']] },
    { what: 'twice', name: 'imp-bad-twice', files: [...plain.files, plain.files[0]] },
    { what: 'existing name', name: 'imp-native', files: plain.files },
  ];
  const r = await inWorker({ phase: 'importSets', sets, key: KEY });
  const got = r.results;
  console.log(Object.entries(got).map(([w, o]) => `${w}: ${o.code} ${o.message ?? ''}`)
    .join('\n'));
  assert.equal(got.native.code, 'ok');
  assert.equal(scanText(got.native.entries), plain.scan, 'the imported database reads as native');
  assert.equal(got['native, encrypted'].code, 'ok');
  assert.equal(scanText(got['native, encrypted'].entries), sealed.scan);
  assert.equal(String(got.native.entries.length), skv('count', plain.dir).toString().trim());
  const want = {
    'encrypted, no key': ['encryption', /not_configured|key/],
    'plaintext, a key': ['encryption', /encrypt/],
    'no CURRENT': ['invalid_argument', /CURRENT/],
    'truncated table': [null, new RegExp(table[0].replace('.', '\\.'))],
    'no manifest': [null, new RegExp(manifest)],
    LOCK: ['invalid_argument', /"LOCK" is not the name of a database file/],
    '../x': ['invalid_argument', /"\.\.\/x" is not the name of a database file/],
    twice: ['invalid_argument', /is given twice/],
    'existing name': ['invalid_argument', /imp-native: already exists/],
  };
  for (const [what, [code, message]] of Object.entries(want)) {
    assert.notEqual(got[what].code, 'ok', `${what}: imported`);
    if (code) assert.equal(got[what].code, code, `${what}: ${JSON.stringify(got[what])}`);
    assert.match(got[what].message, message, `${what}: ${JSON.stringify(got[what])}`);
  }
  assert.equal(got['encrypted, no key'].reason, 'not_configured');
  assert.equal(got['plaintext, a key'].reason, 'not_encrypted');
  assert.equal(got['truncated table'].code, 'corruption', JSON.stringify(got['truncated table']));
  const made = r.dirsAfter.filter((d) => !r.dirsBefore.includes(d));
  assert.deepEqual(made, ['imp-native', 'imp-sealed'], 'only the good sets left a directory');
  assert.deepEqual(r.listed.filter((n) => n.startsWith('imp-')), ['imp-native', 'imp-sealed']);

  // The client: checks before it sends, and imports through a worker of its own.
  const client = await harness.page.evaluate(async ({ files, bad }) => {
    const { importFiles, open, listDatabases, SkvError } = window.skv;
    const bytes = (b) => Uint8Array.from(atob(b), (c) => c.charCodeAt(0));
    const decoded = files.map(([n, b]) => [n, bytes(b)]);
    const result = {};
    for (const [what, name, set] of [
      ['good', 'imp-client', decoded],
      ['LOCK', 'imp-client-lock', [...decoded, ['LOCK', new Uint8Array(0)]]],
      ['not an array', 'imp-client-bad', 'files'],
      ['no CURRENT', 'imp-client-bad', decoded.filter(([n]) => n !== 'CURRENT')],
      ['bad name', '../x', decoded],
    ]) {
      try {
        await importFiles(name, set);
        result[what] = { code: 'ok' };
      } catch (e) {
        result[what] = e instanceof SkvError ? { code: e.code, message: e.message }
          : { code: `${e.name}: ${e.message}` };
      }
    }
    const db = await open('imp-client', { createIfMissing: false });
    result.count = await db.count();
    await db.close();
    result.listed = (await listDatabases()).filter((n) => n.startsWith('imp-client'));
    return result;
  }, { files: plain.files });
  assert.equal(client.good.code, 'ok', JSON.stringify(client.good));
  assert.equal(client.count, got.native.entries.length);
  for (const what of ['LOCK', 'not an array', 'no CURRENT', 'bad name']) {
    assert.equal(client[what].code, 'invalid_argument', `client, ${what}: ${JSON.stringify(client[what])}`);
  }
  assert.deepEqual(client.listed, ['imp-client']);

  const glue = await inWorker({ phase: 'glue' });
  console.log(JSON.stringify(glue));
  assert.equal(glue.begin, 0);
  for (const file of ['LOCK', '../x', '000001.tmp', '1.sst', '(empty)']) {
    assert.equal(glue[file].code, 'invalid_argument', `glue, ${file}: ${JSON.stringify(glue[file])}`);
    assert.match(glue[file].message, /is not a name of a database file/);
  }
  assert.equal(glue.noCurrent.code, 'invalid_argument');
  assert.match(glue.noCurrent.message, /no CURRENT/);
  assert.equal(glue.checkpointClosed.code, 'closed');
});

// Checks a checkpoint's keys against the commit order: every key acknowledged before the call,
// and exactly the first n keys of the order for some n. Returns n.
function assertPrefix(r) {
  const inCopy = new Set(r.copyKeys);
  for (const k of r.order.slice(0, 600)) assert.ok(inCopy.has(k), `${k}, awaited before, is missing`);
  for (const k of r.ackedBefore) assert.ok(inCopy.has(k), `${k}, acknowledged before, is missing`);
  const n = r.copyKeys.length;
  assert.deepEqual([...inCopy].sort(), r.order.slice(0, n).sort(), 'the copy is a prefix');
  assert.equal(r.sourceKeys.length, r.order.length + 1, 'the source has every commit');
  assert.equal(r.sample, r.expectedSample);
  return n;
}

function writeExport(files, name) {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const [file, b64] of files) {
    assert.match(file, /^[A-Za-z0-9._-]+$/, 'a plain file name');
    fs.writeFileSync(path.join(dir, file), Buffer.from(b64, 'base64'));
  }
  return dir;
}

test('a checkpoint under commits holds a prefix, survives a reload, opens natively; refusals ' +
  'change nothing', LIMIT, async () => {
  const r = await inWorker({ phase: 'underCommits', source: 'cp-src', target: 'cp-copy' });
  const n = assertPrefix(r);
  console.log(`checkpoint: ${n} of ${r.order.length} commits (600 awaited before, ` +
    `${r.ackedBefore.length} more acknowledged before the call); source levels ` +
    `${JSON.stringify(r.sourceLevels)}; files ${r.files.map(([f]) => f).join(' ')}`);
  assert.ok(r.ackedBefore.length >= 300, 'commits acknowledged just before the call');
  assert.ok(n >= 1000, 'the commits issued before the call are in the checkpoint');
  assert.ok(n <= r.order.length - 20, 'the commits after the checkpoint are not');

  await harness.page.reload();
  await harness.page.waitForFunction(() => window.ready === true);
  const after = await harness.page.evaluate(async () => {
    const db = await window.skv.open('cp-copy', { createIfMissing: false });
    const keys = (await db.scan(undefined, undefined, { keysOnly: true, as: 'string' }));
    await db.close();
    return keys;
  });
  assert.deepEqual(after, r.copyKeys, 'the checkpoint after a reload');

  if (!noTool) {
    const dir = writeExport(r.files, 'cp-copy-export');
    assert.equal(skv('count', dir).toString().trim(), String(n));
    const lines = skv('scan', dir, '--keys-only').toString('latin1').split('\n').filter(Boolean);
    assert.deepEqual(lines, r.copyKeys, 'the native tool reads the exported checkpoint');
  }

  // The client: a checkpoint through the worker it started, and a refusal.
  const client = await harness.page.evaluate(async () => {
    const { open, SkvError } = window.skv;
    const db = await open('cp-src', { createIfMissing: false });
    await db.set('z/client', 'x');
    await db.checkpoint('cp-client');
    let refused;
    try {
      await db.checkpoint('cp-copy');
    } catch (e) {
      refused = e instanceof SkvError ? { code: e.code, message: e.message } : String(e);
    }
    await db.close();
    const copy = await open('cp-client', { createIfMissing: false });
    const got = { count: await copy.count(), last: await copy.get('z/client', { as: 'string' }) };
    await copy.close();
    return { ...got, refused };
  });
  assert.equal(client.count, r.order.length + 2);
  assert.equal(client.last, 'x');
  assert.equal(client.refused.code, 'invalid_argument', JSON.stringify(client.refused));
  assert.match(client.refused.message, /cp-copy: already exists/);

  // Refusals in the worker API; the page holds the Web Lock of 'cp-locked' meanwhile.
  await harness.page.evaluate(() => new Promise((held) => {
    navigator.locks.request('skv:cp-locked', () => new Promise((release) => {
      window.releaseLock = release;
      held();
    }));
  }));
  const ref = await inWorker({ phase: 'refusals', source: 'cp-src', existing: 'cp-copy' });
  await harness.page.evaluate(() => window.releaseLock());
  console.log(Object.entries(ref.out).map(([w, o]) => `${w}: ${o.code} ${o.message}`).join('\n'));
  const want = {
    existing: ['invalid_argument', /opfs:cp-copy: already exists/],
    itself: ['invalid_argument', /opfs:cp-src: already exists/],
    openHere: ['busy', /cp-open-elsewhere/],
    locked: ['busy', /cp-locked/],
    dotdot: ['invalid_argument', /database name/],
    slash: ['invalid_argument', /database name/],
    number: ['invalid_argument', /database name/],
    closedMeanwhile: ['closed', /closed/],
    afterClose: ['closed', /closed/],
  };
  for (const [what, [code, message]] of Object.entries(want)) {
    assert.equal(ref.out[what].code, code, `${what}: ${JSON.stringify(ref.out[what])}`);
    assert.match(ref.out[what].message, message, `${what}: ${JSON.stringify(ref.out[what])}`);
  }
  assert.equal(ref.unchanged, true, 'a refused checkpoint changed the existing database');
  assert.deepEqual(ref.dirsAfter, ref.dirsBefore.filter((d) => d !== 'cp-open-elsewhere'),
    'a refused checkpoint left a directory');
  assert.deepEqual(await inWorker({ phase: 'read', name: 'cp-copy' }), r.copyKeys);
});

test('the checkpoint of an encrypted database is sealed and needs the key', LIMIT, async () => {
  const r = await inWorker({
    phase: 'underCommits', source: 'cp-enc', target: 'cp-enc-copy', key: KEY,
  });
  const n = assertPrefix(r);
  const current = r.files.find(([f]) => f === 'CURRENT');
  assert.match(Buffer.from(current[1], 'base64').toString('latin1'), /^sealed v1 /m);
  const tries = await harness.page.evaluate(async ({ key, wrong }) => {
    const { open, SkvError } = window.skv;
    const out = {};
    for (const [what, options] of [['no key', {}], ['wrong key', { key: wrong }],
      ['key', { key }]]) {
      try {
        const db = await open('cp-enc-copy', { createIfMissing: false, ...options });
        out[what] = { code: 'ok', count: await db.count() };
        await db.close();
      } catch (e) {
        out[what] = e instanceof SkvError ? { code: e.code, reason: e.reason } : String(e);
      }
    }
    return out;
  }, { key: KEY, wrong: WRONG });
  assert.deepEqual(tries['no key'], { code: 'encryption', reason: 'not_configured' });
  assert.deepEqual(tries['wrong key'], { code: 'encryption', reason: 'wrong_key' });
  assert.deepEqual(tries.key, { code: 'ok', count: n });
  if (!noTool) {
    const dir = writeExport(r.files, 'cp-enc-export');
    assert.equal(skv('count', dir, '--key-file', keyFile).toString().trim(), String(n));
    const bare = spawnSync(SKV, ['count', dir], { encoding: 'latin1' });
    assert.notEqual(bare.status, 0, 'the tool refuses the sealed checkpoint without the key');
  }
});
