// The worker side of the value log tests (the worker API, and the wasm glue straight).
//   { phase: 'write', name }        writes value-log-data.js's database, collects the value log's
//                                   garbage, reopens it; returns the question times, the answers
//                                   at each stage, the counters and the exported files (base64)
//   { phase: 'read', name, times }  reopens `name` without the valueLog option: the answers
//   { phase: 'bad', name }          value-log-bad.js through the worker API and the glue
import { open, deleteDatabase, listDatabases, SkvError } from '/web/src/worker.js';
import createSkvCore from '/web/dist/skv-core.mjs';
import { serve, check } from './harness.js';
import {
  openOptions, writeVersions, writeTail, questionTimes, answers, checkFacts,
} from './value-log-data.js';
import { badValueLogOptions, goodValueLogOptions } from './value-log-bad.js';

function base64(b) {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

const code = (e) => (e instanceof SkvError ? e.code : `${e && e.name}: ${e && e.message}`);

// The value log's counters and the shape of the levels.
function counters(db) {
  const s = db.stats();
  const out = { filesPerLevel: s.filesPerLevel, poolUsed: s.pool.used };
  for (const k of ['vlogFiles', 'vlogBytes', 'vlogGarbageBytes', 'vlogGcRuns', 'vlogGcBytesMoved',
    'vlogCacheBytes', 'compactionSteps', 'longestStepMs']) {
    out[k] = s[k];
  }
  return out;
}

async function writePhase(name) {
  await deleteDatabase(name);
  const db = await open(name, openOptions());
  const stats = {};
  let before, collected, times;
  try {
    await writeVersions(db);
    stats.compacted = counters(db);
    const early = await questionTimes(db);
    before = await answers(db, early);
    await db.collectVlogGarbage();
    stats.collected = counters(db);
    collected = await answers(db, early);
    await db.collectVlogGarbage();  // nothing left to do
    stats.again = counters(db);
    await writeTail(db);
    times = await questionTimes(db);
  } finally {
    await db.close();
  }
  const again = await open(name, openOptions());
  try {
    const reopened = await answers(again, times);
    checkFacts(reopened, check);
    stats.reopened = counters(again);
    const files = again.exportFiles().map(([f, data]) => [f, base64(data)]);
    return { times, before, collected, reopened, stats, files };
  } finally {
    await again.close();
  }
}

async function readPhase(name, times) {
  const db = await open(name, { createIfMissing: false });
  try {
    return { answers: await answers(db, times), stats: counters(db) };
  } finally {
    await db.close();
  }
}

async function gluePhase(name, loops) {
  await deleteDatabase(name);
  const core = await createSkvCore({ skvTables: [] });
  const out = { options: {}, messages: {}, tally: {} };
  // No handle table (999): options the glue accepts end in not_found, never invalid_argument.
  const bad = badValueLogOptions();
  for (let i = 0; i < loops; i++) {
    const [what, options] = bad[i % bad.length];
    const w = new core.WebDb();
    let got;
    try {
      got = w.open(name, 999, { createIfMissing: false, ...options }) === 0 ? 'opened'
        : w.errorCode();
      if (i < bad.length) out.messages[what] = w.errorMessage();
    } catch (e) {
      got = `threw ${code(e)}`;
    } finally {
      w.delete();
    }
    if (i < bad.length) out.options[what] = got;
    out.tally[got] = (out.tally[got] || 0) + 1;
  }
  const w = new core.WebDb();
  out.closedGc = w.collectVlogGarbage() === 0 ? 'ok' : w.errorCode();
  w.delete();
  return out;
}

async function badPhase(name) {
  const options = {};
  for (const [what, o, shown] of badValueLogOptions()) {
    try {
      await open(`${name}-option`, o);
      options[what] = { code: 'opened' };
    } catch (e) {
      options[what] = { code: code(e), named: String(e.message).includes(shown),
        message: String(e.message) };
    }
  }
  const listed = (await listDatabases()).filter((n) => n.startsWith(`${name}-option`));
  // The edge values open, write a separated value and read it back; garbage collection on a
  // database that never used the value log does nothing.
  const good = {};
  const value = 'x'.repeat(5000);
  for (const [what, o] of goodValueLogOptions()) {
    const n = `${name}-good`;
    await deleteDatabase(n);
    try {
      const db = await open(n, o);
      await db.set('k', value);
      await db.flush();
      const files = db.stats().vlogFiles;
      await db.collectVlogGarbage();
      good[what] = `${db.get('k', { as: 'string' }) === value} ${files}`;
      await db.close();
    } catch (e) {
      good[what] = code(e);
    }
    await deleteDatabase(n);
  }
  const plain = await open(`${name}-plain`);
  await plain.set('k', 'v');
  await plain.collectVlogGarbage();
  const s = plain.stats();
  good.plain = `${s.vlogFiles} ${s.vlogGcRuns}`;
  await plain.close();
  await deleteDatabase(`${name}-plain`);
  return { options, listed, good, glue: await gluePhase(`${name}-glue`, 500) };
}

// Background garbage collection: overwrites half the keys of a flushed table, so the compaction
// that L0's trigger starts leaves half of the first value log file garbage, and the worker's
// pump collects it, with no collectVlogGarbage() call. The second table is flushed by the pump
// too (a full memtable, then one more commit), so every step after the first flush is the
// pump's. Returns the counters, and how many keys read their newest value.
async function backgroundPhase(name) {
  await deleteDatabase(name);
  const db = await open(name, {
    valueLog: { threshold: 256, gcRatio: 0.3, maxFileSize: 1 << 20 },
    l0CompactionTrigger: 2, compactionStepBytes: 4096, memtableSize: 64 << 10,
  });
  try {
    const key = (i) => `k/${String(i).padStart(4, '0')}`;
    const value = (i, round) => `${round}:${i}:`.padEnd(2048, String.fromCharCode(97 + (i % 26)));
    for (let round = 0; round < 2; round++) {
      const tx = db.begin();
      for (let i = 0; i < 400; i += round + 1) tx.set(key(i), value(i, round));
      await tx.commit();
      if (round === 0) await db.flush();
    }
    const before = db.stats();
    await db.set('tick', 'the memtable is full: this write freezes it');
    const start = Date.now();
    let s = db.stats();
    while (s.vlogGcRuns === 0 && Date.now() - start < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      s = db.stats();
    }
    let right = 0;
    for (let i = 0; i < 400; i++) {
      if (db.get(key(i), { as: 'string' }) === value(i, i % 2 === 0 ? 1 : 0)) right++;
    }
    return { right, stats: counters(db), compactions: s.compactions - before.compactions,
      compactionSteps: s.compactionSteps - before.compactionSteps,
      pumpSteps: s.steps - before.steps };
  } finally {
    await db.close();
    await deleteDatabase(name);
  }
}

serve(async ({ phase, name, times }) => {
  if (phase === 'background') return backgroundPhase(name);
  if (phase === 'write') return writePhase(name);
  if (phase === 'read') return readPhase(name, times);
  if (phase === 'bad') return badPhase(name);
  throw new Error(`unknown phase ${phase}`);
});
