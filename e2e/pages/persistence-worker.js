// The worker side of the persistence test (the worker API).
//   { phase: 'write' }   writes stage 1 into `name` and closes it; then opens `heldName`, writes
//                        HELD_COUNT Immediate commits and leaves it open (the page reload ends
//                        this worker with the database still open).
//   { phase: 'verify' }  checks `name` holds model(stage) and `heldName` its keys.
import { open, deleteDatabase, listDatabases } from '/web/src/worker.js';
import { serve, check, text } from './harness.js';
import { stageOps, model, diff, heldKey, heldValue, HELD_COUNT } from './persistence-data.js';

let held = null;

function apply(tx, ops) {
  for (const [kind, key, value] of ops) {
    if (kind === 'set') tx.set(key, value);
    else tx.delete(key);
  }
}

function verifyContents(db, stage, what) {
  const expected = model(stage);
  let d = diff(db.scan(), expected, `${what}: forward scan`);
  check(d === null, d);
  const r = db.begin('readonly');
  const backwards = [...r.range(undefined, undefined, { reverse: true, batchSize: 100 })];
  r.rollback();
  d = diff(backwards.reverse(), expected, `${what}: reverse iteration`);
  check(d === null, d);
  check(db.count() === expected.length, `${what}: count ${db.count()} != ${expected.length}`);
  return expected.length;
}

serve(async ({ phase, name, heldName, stage }) => {
  if (phase === 'write') {
    await deleteDatabase(name);
    await deleteDatabase(heldName);
    // A small memtable so stage 1 ends up partly in tables, partly in the WAL only.
    const db = await open(name, { memtableSize: 64 << 10 });
    const txs = stageOps(1);
    for (let t = 0; t < txs.length; t++) {
      const tx = db.begin();
      apply(tx, txs[t]);
      await tx.commit();
      if (t === 2) await db.flush();
    }
    const keys = verifyContents(db, 1, 'after writing');
    const stats = db.stats();
    check(stats.flushes > 0, 'a flush happened');
    await db.close();

    held = await open(heldName);
    for (let i = 0; i < HELD_COUNT; i++) await held.set(heldKey(i), heldValue(i));
    check(held.count() === HELD_COUNT, 'held count');
    return { keys, flushes: stats.flushes, filesPerLevel: stats.filesPerLevel };
  }

  const db = await open(name, { createIfMissing: false });
  const keys = verifyContents(db, stage, `stage ${stage} after reopening`);
  await db.close();
  const h = await open(heldName, { createIfMissing: false });
  check(h.count() === HELD_COUNT, `held database: count ${h.count()} != ${HELD_COUNT}`);
  for (let i = 0; i < HELD_COUNT; i++) {
    const v = text(h.get(heldKey(i)));
    check(v === heldValue(i), `held database: ${heldKey(i)} = ${v}`);
  }
  await h.close();
  const names = await listDatabases();
  check(names.includes(name) && names.includes(heldName), `listDatabases: ${names}`);
  return { keys };
});
