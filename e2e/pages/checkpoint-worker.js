// The worker half of e2e/tests/checkpoint.mjs: checkpoints under commits and importFiles(),
// through the worker API (and the wasm glue once), phase by phase.
import {
  open, deleteDatabase, importFiles, listDatabases, SkvError,
} from '/web/src/worker.js';
import { serve, check } from './harness.js';
import { digest } from './encryption-data.js';

const str = (b) => (typeof b === 'string' ? b : new TextDecoder().decode(b));
const pad = (i) => String(i).padStart(5, '0');

function base64(b) {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}
const unbase64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** The outcome of a promise as { code, reason, message } ('ok' when it resolved). */
async function outcome(p) {
  try {
    await p;
    return { code: 'ok' };
  } catch (e) {
    return e instanceof SkvError ? { code: e.code, reason: e.reason, message: e.message }
      : { code: `${e.name}: ${e.message}` };
  }
}

/** The directories under skv/ (listDatabases() lists only the ones holding slot files). */
async function directories() {
  let root;
  try {
    root = await (await navigator.storage.getDirectory()).getDirectoryHandle('skv');
  } catch {
    return [];
  }
  const out = [];
  for await (const [name] of root.entries()) out.push(name);
  return out.sort();
}

const keys = (db) => db.scan(undefined, undefined, { keysOnly: true, as: 'string' }).map(str);

const phases = {
  // Commits go on while the checkpoint is taken: A awaited before, B issued before the call
  // (some acknowledged before it), C issued after the call, all awaited after it.
  async underCommits({ source, target, key }) {
    await deleteDatabase(source);
    await deleteDatabase(target);
    const db = await open(source, { memtableSize: 64 << 10, ...(key ? { key } : {}) });
    const value = (i) => `value ${i} `.repeat(20);
    const order = [];
    for (let i = 0; i < 600; i++) {
      const k = `a/${pad(i)}`;
      await db.set(k, value(i));
      order.push(k);
    }
    const acked = new Set();
    const pending = [];
    const commit = (k, i) => {
      order.push(k);
      const p = db.set(k, value(i)).then(() => acked.add(k));
      pending.push(p);
      return p;
    };
    // B: issued together, not awaited; the first 300 are acknowledged before the call.
    for (let i = 0; i < 300; i++) commit(`b/${pad(i)}`, i);
    await pending[pending.length - 1];
    for (let i = 300; i < 400; i++) commit(`b/${pad(i)}`, i);
    const ackedBefore = [...acked];
    const call = db.checkpoint(target);
    // C: one commit after the other while the checkpoint runs, and 20 after it is done.
    let done = false;
    call.finally(() => { done = true; }).catch(() => {});
    let c = 0;
    const writer = (async () => {
      while (!done) await commit(`c/${pad(c)}`, c++);
      for (let i = 0; i < 20; i++) await commit(`c/${pad(c)}`, c++);
    })();
    const cp = await outcome(call);
    await writer;
    await Promise.all(pending);
    check(cp.code === 'ok', `checkpoint: ${JSON.stringify(cp)}`);
    // The source stays open and in use.
    await db.set('z/after', 'after');
    const sourceKeys = keys(db);
    const sourceStats = db.stats();
    await db.close();

    const copy = await open(target, { createIfMissing: false, ...(key ? { key } : {}) });
    const copyKeys = keys(copy);
    const sample = copy.get('a/00123', { as: 'string' });
    const files = copy.exportFiles();
    await copy.close();
    return {
      order, ackedBefore, copyKeys, sourceKeys, sample, expectedSample: value(123),
      sourceLevels: sourceStats.filesPerLevel,
      files: files.map(([f, b]) => [f, base64(b)]),
    };
  },

  // Refusals of checkpoint(): each by name, creating nothing and changing nothing.
  async refusals({ source, existing, key }) {
    const db = await open(source, { createIfMissing: false, ...(key ? { key } : {}) });
    const before = await digest(existing);
    const dirsBefore = await directories();
    const other = await open('cp-open-elsewhere');
    const out = {
      existing: await outcome(db.checkpoint(existing)),
      itself: await outcome(db.checkpoint(source)),
      openHere: await outcome(db.checkpoint('cp-open-elsewhere')),
      // The page holds the Web Lock skv:cp-locked (another holder in this origin).
      locked: await outcome(db.checkpoint('cp-locked')),
      dotdot: await outcome(db.checkpoint('../x')),
      slash: await outcome(db.checkpoint('a/b')),
      number: await outcome(db.checkpoint(/** @type {any} */ (42))),
    };
    await other.close();
    // A close while the checkpoint prepares its target stops it; nothing stays behind.
    const racing = db.checkpoint('cp-closed');
    await db.close();
    out.closedMeanwhile = await outcome(racing);
    out.afterClose = await outcome(db.checkpoint('cp-after-close'));
    await deleteDatabase('cp-open-elsewhere');
    const dirsAfter = await directories();
    return {
      out,
      unchanged: JSON.stringify(await digest(existing)) === JSON.stringify(before),
      dirsBefore, dirsAfter,
    };
  },

  // importFiles() through the worker API: a good set reads back; bad sets are refused by name
  // and leave nothing.
  async importSets({ sets, key }) {
    const results = {};
    const dirsBefore = await directories();
    for (const { what, name, files, options } of sets) {
      const decoded = files.map(([f, b]) => [f, unbase64(b)]);
      const opts = options === 'key' ? { key } : options;
      const got = await outcome(importFiles(name, decoded, opts));
      if (got.code === 'ok') {
        const db = await open(name, { createIfMissing: false, ...(opts || {}) });
        got.entries = db.scan().map(([k, v]) => [base64(k), base64(v)]);
        await db.close();
      }
      results[what] = got;
    }
    return { results, dirsBefore, dirsAfter: await directories(), listed: await listDatabases() };
  },

  // The wasm glue refuses what the JavaScript checks refuse, by name, on its own.
  async glue() {
    const { default: createSkvCore } = await import('/web/dist/skv-core.mjs');
    const core = await createSkvCore({ skvTables: [] });
    const imp = new core.WebImport();
    // No slots: begin() works on an empty table, then the names are checked before any write.
    core.skvTables.push({ handles: [] });
    const out = { begin: imp.begin('glue-import', 0) };
    for (const file of ['LOCK', '../x', '000001.tmp', '1.sst', '']) {
      const fresh = new core.WebImport();
      fresh.begin('glue-import', 0);
      fresh.startFile(file);
      out[file || '(empty)'] = { code: fresh.errorCode(), message: fresh.errorMessage() };
      fresh.delete();
    }
    const none = new core.WebImport();
    none.begin('glue-import', 0);
    none.finish();
    out.noCurrent = { code: none.errorCode(), message: none.errorMessage() };
    none.delete();
    imp.delete();
    const db = new core.WebDb();
    db.checkpoint('glue-target', 0);
    out.checkpointClosed = { code: db.errorCode(), message: db.errorMessage() };
    db.delete();
    return out;
  },

  async read({ name, key }) {
    const db = await open(name, { createIfMissing: false, ...(key ? { key } : {}) });
    const got = keys(db);
    await db.close();
    return got;
  },

  async cleanup({ names }) {
    for (const n of names) await deleteDatabase(n);
    return listDatabases();
  },
};

serve(async (args) => phases[args.phase](args));
