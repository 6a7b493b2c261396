// 100,000 keys written in the worker, 1,000 per commit, with a small memtable and small tables
// so that flushes and compactions run inside the worker between commits; then an overwrite and
// delete pass, full verification, a reopen and verification again.
import { open, deleteDatabase } from '/web/src/worker.js';
import { serve, check } from './harness.js';

const key = (i) => `k${String(i).padStart(6, '0')}`;
const FILL = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(4);
const value1 = (i) => `v1:${i}:${FILL.slice(0, 16 + (i % 97))}`;
const value2 = (i) => `v2:${i}`;
// The second pass overwrites every 10th key and deletes every 100th (offset so they differ).
const overwritten = (i) => i % 10 === 3;
const deleted = (i) => i % 100 === 42;
const expected = (i) => (deleted(i) ? undefined : overwritten(i) ? value2(i) : value1(i));

// Every key of [0, total) once, in a scattered order (STRIDE is coprime with the total), so the
// tables of successive flushes overlap and compactions merge them for real.
const STRIDE = 7919;

function verify(db, total, what) {
  const t0 = performance.now();
  const live = total - Math.ceil((total - 42) / 100);
  check(db.count() === live, `${what}: count ${db.count()} != ${live}`);

  // Full forward scan: every live key once, in order, with its value.
  const r = db.begin('readonly');
  let i = 0;
  let seen = 0;
  for (const [k, v] of r.range(undefined, undefined, { as: 'string', batchSize: 2048 })) {
    while (deleted(i)) i++;
    check(k === key(i), `${what}: scan entry ${seen} is ${k}, expected ${key(i)}`);
    check(v === expected(i), `${what}: ${k} = ${v}, expected ${expected(i)}`);
    i++;
    seen++;
  }
  check(seen === live, `${what}: the scan saw ${seen} keys, expected ${live}`);

  // Reverse: the last 1,500 keys, and a sub-range.
  const tail = r.scan(undefined, undefined, { reverse: true, limit: 1500, as: 'string' });
  let j = total - 1;
  for (const [k, v] of tail) {
    while (deleted(j)) j--;
    check(k === key(j) && v === expected(j), `${what}: reverse tail at ${k}, expected ${key(j)}`);
    j--;
  }
  check(tail.length === 1500, `${what}: reverse tail length ${tail.length}`);
  const mid = r.scan(key(50000), key(51000), { reverse: true, as: 'string' });
  j = 50999;
  for (const [k, v] of mid) {
    while (deleted(j)) j--;
    check(k === key(j) && v === expected(j), `${what}: reverse range at ${k}, expected ${key(j)}`);
    j--;
  }
  check(mid.length === 990, `${what}: reverse range length ${mid.length}`);
  check(r.count(key(50000), key(51000)) === 990, `${what}: range count`);

  // Point reads: scattered hits (and deleted keys), plus keys that never existed.
  for (let n = 0; n < 5000; n++) {
    const p = (n * 104729 + 17) % total;
    const v = r.get(key(p), { as: 'string' });
    check(v === expected(p), `${what}: get ${key(p)} = ${v}, expected ${expected(p)}`);
  }
  for (let n = 0; n < 500; n++) {
    check(r.get(`${key(n)}~`) === undefined, `${what}: a key that never existed`);
    check(r.get(key(total + n)) === undefined, `${what}: a key past the end`);
  }
  r.rollback();
  return Math.round(performance.now() - t0);
}

serve(async ({ name, total, perCommit }) => {
  await deleteDatabase(name);
  const options = { memtableSize: 256 << 10, targetFileSize: 256 << 10, levelBaseBytes: 1 << 20 };
  const db = await open(name, options);
  const t0 = performance.now();
  for (let c = 0; c < total / perCommit; c++) {
    const tx = db.begin();
    for (let n = 0; n < perCommit; n++) {
      const i = ((c * perCommit + n) * STRIDE) % total;
      tx.set(key(i), value1(i));
    }
    await tx.commit();
  }
  const writeMs = Math.round(performance.now() - t0);
  const second = [];
  for (let i = 0; i < total; i++) {
    if (deleted(i)) second.push(['delete', i]);
    else if (overwritten(i)) second.push(['set', i]);
  }
  for (let c = 0; c < second.length; c += perCommit) {
    const tx = db.begin();
    for (const [kind, i] of second.slice(c, c + perCommit)) {
      if (kind === 'set') tx.set(key(i), value2(i));
      else tx.delete(key(i));
    }
    await tx.commit();
  }
  const rewriteMs = Math.round(performance.now() - t0) - writeMs;

  // Background work runs between calls: wait until none is left (no flush or compaction queued,
  // no frozen memtable). Then every compaction the writes called for has run, and no level is at
  // its compaction trigger (four L0 tables).
  let stats = db.stats();
  let idleMs = 0;
  while ((stats.backgroundJobs > 0 || stats.immutableMemtables > 0) && idleMs < 30000) {
    await new Promise((r) => setTimeout(r, 10));
    idleMs += 10;
    stats = db.stats();
  }
  check(stats.backgroundJobs === 0 && stats.immutableMemtables === 0,
    `still busy after ${idleMs} ms: ${stats.backgroundJobs} jobs, ${stats.immutableMemtables} frozen`);
  check(stats.flushes > 0, `flushes: ${stats.flushes}`);
  check(stats.compactions > 0, `compactions: ${stats.compactions}`);
  check(stats.filesPerLevel[0] < 4, `idle with ${stats.filesPerLevel[0]} L0 tables`);
  const verifyMs = verify(db, total, 'before reopening');
  await db.close();

  const t1 = performance.now();
  const again = await open(name, { ...options, createIfMissing: false });
  const reopenMs = Math.round(performance.now() - t1);
  const verify2Ms = verify(again, total, 'after reopening');
  const after = again.stats();
  await again.close();
  return {
    writeMs, rewriteMs, idleMs, verifyMs, reopenMs, verify2Ms,
    stats: {
      flushes: stats.flushes, compactions: stats.compactions, stalls: stats.stalls,
      commits: stats.commits, walSyncs: stats.walSyncs, filesPerLevel: stats.filesPerLevel,
      bytesPerLevel: stats.bytesPerLevel, pool: stats.pool,
    },
    afterReopen: { filesPerLevel: after.filesPerLevel, pool: after.pool },
  };
});
