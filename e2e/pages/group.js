// Group commit in the worker: commits issued in one turn of the event loop share one WAL write
// and, when Immediate, one flush() of the WAL's slot.
import { open, deleteDatabase } from '/web/src/worker.js';
import { serve, check } from './harness.js';

function delta(after, before) {
  return {
    commits: after.commits - before.commits,
    groups: after.commitGroups - before.commitGroups,
    syncs: after.walSyncs - before.walSyncs,
    flushes: after.pool.handleFlushes - before.pool.handleFlushes,
  };
}

async function burst(db, n, durability, prefix) {
  const before = db.stats();
  const commits = [];
  for (let i = 0; i < n; i++) {
    const tx = db.begin();
    tx.set(`${prefix}${i}`, `value ${i}`);
    commits.push(tx.commit({ durability }));
  }
  // Nothing is written before the turn ends.
  const queued = delta(db.stats(), before);
  check(queued.groups === 0, `no WAL write inside the turn, saw ${queued.groups}`);
  await Promise.all(commits);
  return delta(db.stats(), before);
}

serve(async ({ name }) => {
  await deleteDatabase(name);
  const db = await open(name);
  const immediate = await burst(db, 64, 'immediate', 'i');
  const eventual = await burst(db, 64, 'eventual', 'e');
  // Separate turns: each commit awaited before the next is issued.
  const before = db.stats();
  for (let i = 0; i < 8; i++) await db.set(`s${i}`, 'x');
  const sequential = delta(db.stats(), before);
  check(db.count() === 64 + 64 + 8, 'every commit landed');
  await db.close();
  return { immediate, eventual, sequential };
});
