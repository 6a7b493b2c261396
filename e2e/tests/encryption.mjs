// Encryption at rest in the browser (docs/web.md, "Encryption"):
//  - a database created with `key` in the worker (tables on disk, more writes only in the WAL)
//    reads the same after a page reload through the client given the key as hex;
//  - no key, a wrong key, a key id the files do not name, and a key for a plaintext database are
//    refused as 'encryption' with their reason, through the client, the worker API and the wasm
//    glue, and a refused open leaves every file byte-identical;
//  - the exported files hold none of the keys' or values' text (a plaintext database's do);
//  - the exported directory opens with the native tool given the key file (skipped when there
//    is no native tool);
//  - bad `key` and `keyId` values are invalid_argument at all three boundaries, naming the option
//    and never repeating the key, and create nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, ROOT } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';
import { badKeyOptions, messageProblem } from '../pages/encryption-bad.js';
import { KEY_WORD, VALUE_WORD } from '../pages/encryption-data.js';

const SKV = path.join(path.resolve(ROOT, process.env.SKV_NATIVE_BUILD || 'build'), 'skv');
const LIMIT = { timeout: 180_000 };
const KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0';
const WRONG = 'f0e1d2c3b4a5968778695a4b3c2d1e0fffeeddccbbaa99887766554433221100';

async function inWorker(page, args) {
  const r = await page.evaluate((a) => window.runWorker('encryption-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

async function withPage(fn) {
  const server = await startServer();
  const profile = newProfile();
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    await fn(page);
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
}

// Runs in the page: the entries through the client with `key`, then the refused opens with the
// files' digests before and after each.
async function clientSide({ name, plainName, key, wrongKey }) {
  const { entries, digest } = await import('/e2e/pages/encryption-data.js');
  const { open, SkvError } = window.skv;
  const db = await open(name, { createIfMissing: false, key });
  const got = await entries(db);
  await db.close();
  const bytes = Uint8Array.from(key.match(/../g), (h) => parseInt(h, 16));
  const attempts = [
    ['no key', name, {}],
    ['wrong key', name, { key: wrongKey }],
    ['key id 2', name, { key, keyId: 2 }],
    ['key for a plaintext database', plainName, { key }],
    ['key for a plaintext database, as bytes', plainName, { key: bytes }],
  ];
  const refused = {};
  for (const [what, db2, options] of attempts) {
    const before = await digest(db2);
    try {
      const opened = await open(db2, { createIfMissing: false, ...options });
      await opened.close();
      refused[what] = { code: 'opened' };
    } catch (e) {
      refused[what] = e instanceof SkvError ? { code: e.code, reason: e.reason, message: e.message }
        : { code: `${e.name}: ${e.message}` };
    }
    refused[what].unchanged = JSON.stringify(await digest(db2)) === JSON.stringify(before);
  }
  const callerKeyKept = bytes.every((b, i) => b === parseInt(key.slice(2 * i, 2 * i + 2), 16));
  return { entries: got, refused, callerKeyKept };
}

const WANT = {
  'no key': 'not_configured',
  'wrong key': 'wrong_key',
  'wrong key as bytes': 'wrong_key',
  'key id 2': 'unknown_key_id',
  'key for a plaintext database': 'not_encrypted',
  'key for a plaintext database, as bytes': 'not_encrypted',
};

function assertRefusals(out, where) {
  for (const [what, got] of Object.entries(out)) {
    assert.equal(got.code, 'encryption', `${where}, ${what}: ${JSON.stringify(got)}`);
    assert.equal(got.reason, WANT[what], `${where}, ${what}: ${JSON.stringify(got)}`);
    assert.equal(got.unchanged, true, `${where}, ${what}: a refused open changed a file`);
    assert.ok(!got.message.toLowerCase().includes(KEY.slice(0, 16)), `${where}, ${what}`);
  }
}

let exported = null;

test('an encrypted database reads the same after a reload; refusals by name change nothing',
  LIMIT, () => withPage(async (page) => {
    const name = 'enc-reload';
    const plainName = 'enc-plain';
    const written = await inWorker(page, { phase: 'write', name, key: KEY });
    const plain = await inWorker(page, { phase: 'plain', name: plainName });
    console.log(`written: ${written.entries.length} entries, levels ` +
      `${JSON.stringify(written.filesPerLevel)}, memtable ${written.memtableBytes} bytes, ` +
      `${written.files.length} files exported`);
    assert.ok(written.filesPerLevel.some((n) => n > 0), 'tables on disk');
    assert.ok(written.memtableBytes > 0, 'some writes only in the WAL');
    assert.equal(written.entries.length, 2000 - 1 + 40);
    exported = written;

    // The files hold no key or value text; the plaintext database's files do (so the search
    // would find it).
    const has = (files, word) => files.filter(([, b]) =>
      Buffer.from(b, 'base64').includes(Buffer.from(word))).map(([f]) => f);
    for (const word of [KEY_WORD, VALUE_WORD, 'number 00042', 'in the wal']) {
      assert.deepEqual(has(written.files, word), [], `"${word}" in the encrypted files`);
    }
    assert.ok(has(plain.files, KEY_WORD).length > 0, 'the plaintext control holds the keys');
    assert.ok(has(plain.files, VALUE_WORD).length > 0, 'the plaintext control holds the values');
    const current = written.files.find(([f]) => f === 'CURRENT');
    assert.match(Buffer.from(current[1], 'base64').toString('latin1'), /^sealed v1 cipher=1 key=1 /m,
      'CURRENT names XChaCha20-Poly1305 and key id 1');

    await page.reload();
    await page.waitForFunction(() => window.ready === true);
    const client = await page.evaluate(clientSide, { name, plainName, key: KEY, wrongKey: WRONG });
    assert.deepEqual(client.entries, written.entries, 'the client after the reload');
    assert.equal(client.callerKeyKept, true, "the client leaves the caller's key array alone");
    assertRefusals(client.refused, 'client');

    const api = await inWorker(page,
      { phase: 'refusals', name, plainName, key: KEY, wrongKey: WRONG });
    assertRefusals(api.out, 'worker API');
    assert.equal(api.count, written.entries.length, 'the right key still opens it');
    const again = await inWorker(page, { phase: 'read', name, key: KEY.toUpperCase() });
    assert.deepEqual(again.entries, written.entries, 'the worker API, key in upper case');
  }));

test('the wasm glue: a key opens its database, refusals carry their reason', LIMIT,
  () => withPage(async (page) => {
    const r = await inWorker(page, { phase: 'glue', name: 'enc-glue', key: KEY, wrongKey: WRONG });
    assert.deepEqual(r['right key'], { code: 'ok', value: 'glue-value' });
    for (const [what, reason] of [['no key', 'not_configured'], ['wrong key', 'wrong_key'],
      ['key id 3', 'unknown_key_id']]) {
      assert.equal(r[what].code, 'encryption', `${what}: ${JSON.stringify(r[what])}`);
      assert.equal(r[what].reason, reason, `${what}: ${JSON.stringify(r[what])}`);
    }
  }));

test('bad key and keyId values are invalid_argument at every boundary, never echoing the key',
  LIMIT, () => withPage(async (page) => {
    const client = await page.evaluate(async () => {
      const { badKeyOptions } = await import('/e2e/pages/encryption-bad.js');
      const { open, listDatabases, SkvError } = window.skv;
      const out = {};
      for (const [what, options] of badKeyOptions()) {
        try {
          const db = await open('enc-bad-client', options);
          await db.close();
          out[what] = { code: 'opened' };
        } catch (e) {
          out[what] = e instanceof SkvError ? { code: e.code, message: e.message }
            : { code: `${e.name}: ${e.message}` };
        }
      }
      return { out, listed: (await listDatabases()).filter((n) => n.startsWith('enc-bad')) };
    });
    const worker = await inWorker(page, { phase: 'bad', name: 'enc-bad-worker' });
    const all = [['client', client.out], ['worker API', worker.api], ['glue', worker.glue]];
    for (const [where, out] of all) {
      assert.deepEqual(Object.keys(out).filter((w) => w !== 'throwing key getter'),
        badKeyOptions().map(([w]) => w), where);
      for (const [what, got] of Object.entries(out)) {
        assert.equal(got.code, 'invalid_argument', `${where}, ${what}: ${JSON.stringify(got)}`);
        assert.equal(messageProblem(what, got.message), null, `${where}, ${what}`);
      }
    }
    console.log(`e.g. ${worker.glue['key with a non-hex digit'].message}; ` +
      `${client.out['key of 31 bytes'].message}`);
    assert.match(worker.glue['throwing key getter'].message, /option key could not be read/);
    assert.equal(worker.control, 'not_found', 'a good key passes the glue checks');
    assert.deepEqual(client.listed, [], 'a refused open created a database (client)');
    assert.deepEqual(worker.listed, [], 'a refused open created a database (worker API)');
  }));

// Skipped only without a native tool; its commands take --key-file (skv help scan).
function keyFileSupport() {
  if (!fs.existsSync(SKV)) return `no native tool at ${SKV} (cmake --build build)`;
  const help = spawnSync(SKV, ['help', 'scan'], { encoding: 'utf8' });
  assert.ok(`${help.stdout}${help.stderr}`.includes('--key-file'),
    `${SKV} help scan does not mention --key-file`);
  return false;
}

test('the exported encrypted directory opens with the native skv tool and the key file',
  { ...LIMIT, skip: keyFileSupport() }, () => {
    assert.ok(exported, 'the first test exported the files');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skv-e2e-enc-'));
    try {
      const db = path.join(dir, 'db');
      fs.mkdirSync(db);
      for (const [file, b64] of exported.files) {
        assert.match(file, /^[A-Za-z0-9._-]+$/, 'a plain file name');
        fs.writeFileSync(path.join(db, file), Buffer.from(b64, 'base64'));
      }
      const keyFile = path.join(dir, 'key');
      fs.writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
      fs.chmodSync(keyFile, 0o600);
      const r = spawnSync(SKV, ['scan', db, '--key-file', keyFile],
        { encoding: 'latin1', maxBuffer: 64 << 20 });
      assert.equal(r.status, 0, `skv scan --key-file: ${r.stderr}`);
      assert.equal(r.stdout, exported.entries.map(([k, v]) => `${k}\t${v}\n`).join(''));
      const bare = spawnSync(SKV, ['scan', db], { encoding: 'latin1' });
      assert.notEqual(bare.status, 0, 'the tool refuses it without the key');
      assert.match(bare.stderr, /encryption/, bare.stderr);
      console.log(`native: ${exported.entries.length} entries agree with the browser`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
