// The worker side of tests/encryption.mjs (the worker API, and the wasm glue straight).
//   { phase: 'write', name, key }     creates `name` encrypted under `key` (hex; given as bytes),
//                                     writes tables on disk and more in the WAL; returns the
//                                     entries, the levels and the exported files (base64)
//   { phase: 'plain', name }          creates `name` without encryption, with the same entries
//   { phase: 'read', name, key }      reopens `name` with `key` (hex string): the entries
//   { phase: 'refusals', name, plainName, key, wrongKey }
//                                     the refused opens through the worker API, each with the
//                                     files' digest before and after
//   { phase: 'bad', name }            encryption-bad.js through the worker API and the glue
//   { phase: 'glue', name, key, wrongKey }
//                                     the glue alone: create with a key, then the refusals by name
import { open, deleteDatabase, listDatabases, SkvError } from '/web/src/worker.js';
import createSkvCore from '/web/dist/skv-core.mjs';
import { serve, check } from './harness.js';
import { badKeyOptions, messageProblem } from './encryption-bad.js';
import { KEY_WORD, VALUE_WORD, digest, entries } from './encryption-data.js';

const hexBytes = (hex) => Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));

function base64(b) {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

const outcome = (e) => (e instanceof SkvError
  ? { code: e.code, reason: e.reason, message: e.message }
  : { code: `${e && e.name}: ${e && e.message}` });

async function fill(db) {
  for (let batch = 0; batch < 20; batch++) {
    await db.transaction((tx) => {
      for (let i = batch * 100; i < batch * 100 + 100; i++) {
        const n = String(i).padStart(5, '0');
        tx.set(`${KEY_WORD}/${n}`, `${VALUE_WORD} number ${n} ${'.'.repeat(60)}`);
      }
    });
  }
  await db.flush();
  // More writes after the flush: these are only in the WAL when the database closes.
  for (let i = 0; i < 40; i++) {
    await db.set(`${KEY_WORD}/wal/${String(i).padStart(3, '0')}`, `${VALUE_WORD} in the wal ${i}`);
  }
  await db.delete(`${KEY_WORD}/00007`);
}

async function writePhase(name, key, plain) {
  await deleteDatabase(name);
  const keyBytes = key === undefined ? undefined : hexBytes(key);
  const db = await open(name, {
    memtableSize: 64 << 10, compression: 'none', ...(keyBytes ? { key: keyBytes } : {}),
  });
  if (keyBytes) {
    check(keyBytes.every((b, i) => b === parseInt(key.slice(2 * i, 2 * i + 2), 16)),
      "the worker API leaves the caller's key array alone");
  }
  try {
    await fill(db);
    const stats = db.stats();
    const files = db.exportFiles().map(([f, data]) => [f, base64(data)]);
    return { entries: await entries(db), files, filesPerLevel: stats.filesPerLevel,
      memtableBytes: stats.memtableBytes, plain };
  } finally {
    await db.close();
  }
}

async function readPhase(name, key) {
  const db = await open(name, { createIfMissing: false, key });
  try {
    return { entries: await entries(db) };
  } finally {
    await db.close();
  }
}

// Each refused open: its outcome and whether the files stayed byte-identical.
async function refusalsPhase(name, plainName, key, wrongKey) {
  const attempts = [
    ['no key', name, {}],
    ['wrong key', name, { key: wrongKey }],
    ['wrong key as bytes', name, { key: hexBytes(wrongKey) }],
    ['key id 2', name, { key, keyId: 2 }],
    ['key for a plaintext database', plainName, { key }],
  ];
  const out = {};
  for (const [what, db, options] of attempts) {
    const before = await digest(db);
    try {
      const opened = await open(db, { createIfMissing: false, ...options });
      await opened.close();
      out[what] = { code: 'opened' };
    } catch (e) {
      out[what] = outcome(e);
    }
    out[what].unchanged = JSON.stringify(await digest(db)) === JSON.stringify(before);
    out[what].files = Object.keys(before).length;
  }
  // Still opens with the right key afterwards.
  const db = await open(name, { createIfMissing: false, key });
  const count = db.count();
  await db.close();
  return { out, count };
}

// Opens `name` straight through the glue over `slots` slot files in its directory (made on
// first use); returns { w, rc, close }.
async function glueOpen(core, name, options) {
  const root = await (await navigator.storage.getDirectory())
    .getDirectoryHandle('skv', { create: true });
  const dir = await root.getDirectoryHandle(name, { create: true });
  const handles = [];
  for (let i = 0; i < 16; i++) {
    const file = await dir.getFileHandle(`slot-${String(i).padStart(6, '0')}`, { create: true });
    handles.push(await file.createSyncAccessHandle());
  }
  const table = core.skvTables.push({ handles }) - 1;
  const w = new core.WebDb();
  const rc = w.open(name, table, options);
  const close = () => {
    w.close();
    w.delete();
    for (const h of handles) h.close();
    core.skvTables[table] = null;
  };
  return { w, rc, close };
}

async function badPhase(name) {
  await deleteDatabase(name);
  const api = {};
  for (const [what, options] of badKeyOptions()) {
    try {
      const db = await open(name, options);
      await db.close();
      api[what] = { code: 'opened' };
    } catch (e) {
      api[what] = outcome(e);
    }
    api[what].problem = messageProblem(what, api[what].message);
  }
  const listed = (await listDatabases()).filter((n) => n === name);
  // Straight into the glue, past the wrapper's checks. No handle table: a good option set would
  // fail with not_found, never with invalid_argument.
  const core = await createSkvCore({ skvTables: [] });
  const glue = {};
  for (const [what, options] of badKeyOptions()) {
    const w = new core.WebDb();
    try {
      const rc = w.open(name, 999, { createIfMissing: false, ...options });
      glue[what] = rc === 0 ? { code: 'opened' }
        : { code: w.errorCode(), message: w.errorMessage() };
      glue[what].problem = rc === 0 ? null : messageProblem(what, w.errorMessage());
    } finally {
      w.delete();
    }
  }
  // A getter that throws, in the glue.
  const w = new core.WebDb();
  const throwing = {};
  Object.defineProperty(throwing, 'key', { enumerable: true, get() { throw new Error('no key'); } });
  w.open(name, 999, throwing);
  glue['throwing key getter'] = { code: w.errorCode(), message: w.errorMessage(), problem: null };
  w.delete();
  // The control: a good key reaches the platform (not_found, since there is no table).
  const good = new core.WebDb();
  good.open(name, 999, { createIfMissing: false, key: 'ab'.repeat(32), keyId: 7 });
  const control = good.errorCode();
  good.delete();
  return { api, glue, listed, control };
}

async function gluePhase(name, key, wrongKey) {
  await deleteDatabase(name);
  const core = await createSkvCore({ skvTables: [] });
  const made = await glueOpen(core, name, { key: hexBytes(key) });
  check(made.rc === 0, `glue create: ${made.w.errorCode()} ${made.w.errorMessage()}`);
  const tx = made.w.begin(false);
  check(made.w.set(tx, 'glue-key', 'glue-value') === 0, 'glue set');
  const op = made.w.commit(tx, 1);
  for (let i = 0; i < 1000 && made.w.pending() > 0; i++) made.w.runPending(16);
  const done = made.w.takeDone();
  check(done.length === 1 && done[0][0] === op && done[0][1] === 'ok', JSON.stringify(done));
  made.close();
  const out = {};
  for (const [what, options] of [
    ['no key', {}],
    ['wrong key', { key: wrongKey }],
    ['key id 3', { key, keyId: 3 }],
    ['right key', { key }],
  ]) {
    const g = await glueOpen(core, name, { createIfMissing: false, ...options });
    out[what] = g.rc === 0 ? { code: 'ok', value: new TextDecoder().decode(g.w.get(g.w.begin(true),
      'glue-key')) } : { code: g.w.errorCode(), reason: g.w.errorReason(), message: g.w.errorMessage() };
    g.close();
  }
  await deleteDatabase(name);
  return out;
}

serve(async (args) => {
  switch (args.phase) {
    case 'write':
      return writePhase(args.name, args.key, false);
    case 'plain':
      return writePhase(args.name, undefined, true);
    case 'read':
      return readPhase(args.name, args.key);
    case 'refusals':
      return refusalsPhase(args.name, args.plainName, args.key, args.wrongKey);
    case 'bad':
      return badPhase(args.name);
    case 'glue':
      return gluePhase(args.name, args.key, args.wrongKey);
    default:
      throw new Error(`unknown phase ${args.phase}`);
  }
});
