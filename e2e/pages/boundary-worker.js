// The worker API's side of tests/boundary.mjs, one phase per message:
//   closed   a closed Database answers `closed` to every call, and a database opened after it
//            in the same worker gets none of its writes
//   options  wrong-typed and out-of-range open() options are invalid_argument naming the value,
//            and create nothing
//   loop     thousands of refused opens, through the worker API and straight into the wasm
//            glue, then working databases in the same worker and the same wasm instance
//   stray    entries in a database's directory that the pool did not create are ignored: never
//            opened, changed or removed
import { open, deleteDatabase, listDatabases, SkvError } from '/web/src/worker.js';
import createSkvCore from '/web/dist/skv-core.mjs';
import { serve, check, text } from './harness.js';
import { outcome, thrown, describe } from './outcome.js';
import { badOptions } from './bad-options.js';

const describeError = (e) => ({
  code: e && e.name === 'SkvError' ? e.code : describe(e),
  isSkvError: e instanceof SkvError,
  message: String(e && e.message),
});

async function closedPhase(name) {
  const [na, nb] = [`${name}-a`, `${name}-b`];
  await deleteDatabase(na);
  await deleteDatabase(nb);
  const a = await open(na);
  await a.set('a-key', 'a');
  const pending = a.begin();
  pending.set('pending', 'x');
  const reader = a.begin('readonly');
  const iter = reader.range();
  await a.close();
  const b = await open(nb);
  await b.set('b-key', 'b');
  const bBefore = b.stats().lastSequence;

  const calls = {
    begin: thrown(() => a.begin()),
    'begin readonly': thrown(() => a.begin('readonly')),
    get: thrown(() => a.get('b-key')),
    scan: thrown(() => a.scan()),
    count: thrown(() => a.count()),
    range: thrown(() => a.range()),
    stats: thrown(() => a.stats()),
    exportFiles: thrown(() => a.exportFiles()),
    set: await outcome(() => a.set('stray', 'from a')),
    delete: await outcome(() => a.delete('b-key')),
    transaction: await outcome(() => a.transaction((tx) => tx.set('stray', 'from a'))),
    flush: await outcome(() => a.flush()),
    compact: await outcome(() => a.compact()),
    'pending tx.set': thrown(() => pending.set('stray', 'from a')),
    'pending tx.get': thrown(() => pending.get('a-key')),
    'pending tx.commit': await outcome(() => pending.commit()),
    'iterator next': thrown(() => iter.next()),
  };
  const closeAgain = await outcome(() => a.close());
  const other = {
    count: b.count(),
    bKey: b.get('b-key', { as: 'string' }),
    stray: b.get('stray') === undefined,
    sequenceMoved: b.stats().lastSequence - bBefore,
  };
  await b.close();
  const listed = (await listDatabases()).filter((n) => n.startsWith(name));
  await deleteDatabase(na);
  await deleteDatabase(nb);
  return { calls, closeAgain, other, listed };
}

async function optionsPhase(name) {
  await deleteDatabase(name);
  const out = {};
  for (const [what, options, value] of badOptions()) {
    try {
      await open(name, options);
      out[what] = { code: 'opened' };
    } catch (e) {
      out[what] = { ...describeError(e), value };
    }
  }
  const listed = (await listDatabases()).filter((n) => n.startsWith(name));
  // The worker still opens a database afterwards.
  const db = await open(name, { memtableSize: 1 << 20, durability: 'eventual' });
  await db.set('k', 'v');
  const after = db.get('k', { as: 'string' });
  await db.close();
  await deleteDatabase(name);
  return { out, listed, after };
}

// Opens database `name` straight through the wasm glue of `core`, over slot files this function
// creates (as the package lays them out), writes `n` keys and reads them back.
async function glueRoundTrip(core, name, n) {
  const top = await navigator.storage.getDirectory();
  const root = await top.getDirectoryHandle('skv', { create: true });
  const dir = await root.getDirectoryHandle(name, { create: true });
  const handles = [];
  for (let i = 0; i < 32; i++) {
    const file = await dir.getFileHandle(`slot-${String(i).padStart(6, '0')}`, { create: true });
    handles.push(await file.createSyncAccessHandle());
  }
  const table = core.skvTables.push({ handles }) - 1;
  const w = new core.WebDb();
  try {
    check(w.open(name, table, {}) === 0, `glue open: ${w.errorCode()} ${w.errorMessage()}`);
    const tx = w.begin(false);
    for (let i = 0; i < n; i++) check(w.set(tx, `k${i}`, `v${i}`) === 0, `glue set ${i}`);
    const op = w.commit(tx, 1);
    check(op > 0, 'glue commit');
    for (let i = 0; i < 1000 && w.pending() > 0; i++) w.runPending(16);
    const done = w.takeDone();
    check(done.length === 1 && done[0][0] === op && done[0][1] === 'ok',
      `glue commit outcome ${JSON.stringify(done)}`);
    const r = w.begin(true);
    const count = w.count(r, '', '');
    const sample = text(w.get(r, `k${n >> 1}`));
    w.rollback(r);
    check(w.close() === 0, `glue close: ${w.errorMessage()}`);
    return { count, sample };
  } finally {
    w.delete();
    for (const h of handles) h.close();
    core.skvTables[table] = null;
  }
}

async function loopPhase(name, loops) {
  const bad = `${name}-refused`;
  const good = `${name}-good`;
  const glue = `${name}-glue`;
  for (const n of [bad, good, glue]) await deleteDatabase(n);
  const t0 = performance.now();

  // Through the worker API.
  const cases = [{ durability: 1 }, { compression: ['zstd'] }, { memtableSize: 2 ** 40 },
    { createIfMissing: 'no' }];
  const api = {};
  for (let i = 0; i < loops; i++) {
    let got;
    try {
      await open(bad, cases[i % cases.length]);
      got = 'opened';
    } catch (e) {
      got = e instanceof SkvError ? e.code : describe(e);
    }
    api[got] = (api[got] || 0) + 1;
  }
  const apiMs = performance.now() - t0;
  const listed = (await listDatabases()).filter((n) => n === bad);
  const db = await open(good);
  const tx = db.begin();
  for (let i = 0; i < 2000; i++) tx.set(`k${String(i).padStart(5, '0')}`, `value ${i}`);
  await tx.commit();
  const apiAfter = { count: db.count(), sample: db.get('k01234', { as: 'string' }) };
  await db.close();

  // Straight into the glue: options the wrapper would refuse, objects that throw when read, and
  // a handle table that does not exist. Every call must return an error code; none may throw.
  const core = await createSkvCore({ skvTables: [] });
  const glueCases = [
    ['durability 1', { durability: 1 }, 'invalid_argument'],
    ['compression [zstd]', { compression: ['zstd'] }, 'invalid_argument'],
    ['memtableSize 2**40', { memtableSize: 2 ** 40 }, 'invalid_argument'],
    ['memtableSize "65536"', { memtableSize: '65536' }, 'invalid_argument'],
    ...badOptions().slice(-3).map(([what, options]) => [what, options, 'invalid_argument']),
    ['no handle table', { createIfMissing: false }, 'not_found'],
  ];
  const glueOut = {};
  const messages = {};
  for (let i = 0; i < loops; i++) {
    const [what, options, want] = glueCases[i % glueCases.length];
    const w = new core.WebDb();
    let got;
    try {
      const rc = w.open(glue, 1000 + i, options);
      got = rc === 0 ? 'opened' : w.errorCode();
      if (i < glueCases.length) messages[what] = `${w.errorCode()}: ${w.errorMessage()}`;
    } catch (e) {
      got = `threw ${describe(e)}`;
    } finally {
      w.delete();
    }
    const key = got === want ? 'as expected' : `${what} -> ${got}`;
    glueOut[key] = (glueOut[key] || 0) + 1;
  }
  const glueAfter = await glueRoundTrip(core, glue, 500);
  const ms = performance.now() - t0;
  for (const n of [good, glue]) await deleteDatabase(n);
  return { api, apiMs, listed, apiAfter, glue: glueOut, messages, glueAfter, ms };
}

const STRAY_FILES = ['slot-', 'slot-0.0', 'slot-1e1', 'slot-1', 'slot-00001', 'slot-0000001',
  'slot-+00001', 'slot- 00001', 'slot-0x0001', 'slot-000001.bak', 'slot-000001 ', 'SLOT-000001',
  'slot-00000a', 'slot-\uff10\uff10\uff10\uff10\uff10\uff11', 'notes.txt'];
// Directories: one under the name the pool's next slot file would take, so growing must skip it.
const strayDirs = (slots) => [`slot-${String(slots).padStart(6, '0')}`, 'slot-000002.d'];

async function snapshotStrays(dir, dirs) {
  const out = {};
  for (const n of STRAY_FILES) {
    let file;
    try {
      file = await (await dir.getFileHandle(n)).getFile();
    } catch (e) {
      out[n] = `missing: ${e.name}`;
      continue;
    }
    out[n] = `${file.size} ${file.lastModified} ${await file.text()}`;
  }
  for (const n of dirs) {
    try {
      const sub = await dir.getDirectoryHandle(n);
      const inside = [];
      for await (const [entry] of sub.entries()) inside.push(entry);
      out[`${n}/`] = inside.sort().join(',');
    } catch (e) {
      out[`${n}/`] = `missing: ${e.name}`;
    }
  }
  return out;
}

// The pool's files, as docs/web.md names them: 'slot-' and the index, zero-padded to six digits.
async function slotFiles(dir) {
  const names = [];
  for await (const [entry, handle] of dir.entries()) {
    const m = /^slot-(\d+)$/.exec(entry);
    if (handle.kind === 'file' && m && entry === `slot-${String(Number(m[1])).padStart(6, '0')}`) {
      names.push(entry);
    }
  }
  return names.sort();
}

async function strayPhase(name) {
  await deleteDatabase(name);
  let db = await open(name);
  const tx = db.begin();
  for (let i = 0; i < 200; i++) tx.set(`k${String(i).padStart(4, '0')}`, `v${i}`);
  await tx.commit();
  await db.flush();
  const slotsBefore = db.stats().pool.slots;
  await db.close();

  const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('skv');
  const dir = await root.getDirectoryHandle(name);
  const ourSlots = await slotFiles(dir);
  // Foreign entries, each with contents of its own (a name OPFS refuses is left out).
  const made = [];
  for (const n of STRAY_FILES) {
    let h;
    try {
      h = await (await dir.getFileHandle(n, { create: true })).createSyncAccessHandle();
    } catch (e) {
      made.push(`refused by OPFS: ${JSON.stringify(n)} (${e.name})`);
      continue;
    }
    h.write(new TextEncoder().encode(`not skv's: ${n}`.repeat(64)), { at: 0 });
    h.flush();
    h.close();
    made.push(n);
  }
  const dirs = strayDirs(ourSlots.length);
  for (const n of dirs) {
    const sub = await dir.getDirectoryHandle(n, { create: true });
    await sub.getFileHandle('inside', { create: true });
  }
  const before = await snapshotStrays(dir, dirs);
  await new Promise((r) => setTimeout(r, 20));

  // Reopen (a bigger reserve makes the pool add slot files), write, close, and again.
  const reopened = await outcome(async () => {
    db = await open(name, { reserveSlots: 40 });
  });
  const result = { made, slotsBefore, ourSlots: ourSlots.length, reopened };
  if (reopened !== 'resolved') return result;
  await db.set('after', 'stray');
  result.afterReopen = { count: db.count(), k0100: db.get('k0100', { as: 'string' }) };
  result.slotsAfter = db.stats().pool.slots;
  await db.close();
  db = await open(name, { createIfMissing: false });
  result.again = { count: db.count(), after: db.get('after', { as: 'string' }) };
  result.slotsFinal = db.stats().pool.slots;
  await db.close();
  result.slotFilesAfter = (await slotFiles(dir)).length;
  result.strays = { before, after: await snapshotStrays(dir, dirs) };

  // deleteDatabase removes the pool's files and leaves the foreign entries where they are.
  result.deleted = await outcome(() => deleteDatabase(name));
  result.afterDelete = {
    strays: await snapshotStrays(dir, dirs),
    slotFiles: (await slotFiles(dir)).length,
    listed: (await listDatabases()).includes(name),
  };
  await root.removeEntry(name, { recursive: true });
  return result;
}

serve(async ({ phase, name, loops }) => {
  if (phase === 'closed') return closedPhase(name);
  if (phase === 'options') return optionsPhase(name);
  if (phase === 'loop') return loopPhase(name, loops);
  if (phase === 'stray') return strayPhase(name);
  throw new Error(`unknown phase ${phase}`);
});
