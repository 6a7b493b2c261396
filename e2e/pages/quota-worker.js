// The pool-exhaustion half of the quota test.
//   { phase: 'exhaust' }  opens `name` with a pool capped at `maxSlots` and a small memtable, then
//                         commits batches until one fails; reports the error, how many batches
//                         were acknowledged, and whether close() then succeeded.
//   { phase: 'reopen' }   opens it again with a larger cap and checks every acknowledged batch.
import { open, deleteDatabase, SkvError } from '/web/src/worker.js';
import { serve, check, text } from './harness.js';

const PER_COMMIT = 50;
const key = (c, n) => `q/${String(c).padStart(5, '0')}/${String(n).padStart(3, '0')}`;
const FILL = 'quota-'.repeat(40);
const value = (c, n) => `${c}.${n}:${FILL.slice(0, 150 + ((c * 7 + n) % 60))}`;

const describe = (e) => ({
  isSkvError: e instanceof SkvError,
  name: e && e.name,
  code: e && e.code,
  message: String(e && e.message),
});

// Opens `name` with a cap of `maxSlots`. A pool left full by the exhaust phase must open: open()
// adds the slots the new cap allows before the engine needs one.
async function openWithRoom(name, maxSlots) {
  return { db: await open(name, { maxSlots, createIfMissing: false }) };
}

serve(async ({ phase, name, maxSlots, memtableSize, maxCommits, acked }) => {
  if (phase === 'exhaust') {
    await deleteDatabase(name);
    const db = await open(name, { maxSlots, memtableSize });
    let done = 0;
    let failure = null;
    for (let c = 0; c < maxCommits && !failure; c++) {
      const tx = db.begin();
      try {
        for (let n = 0; n < PER_COMMIT; n++) tx.set(key(c, n), value(c, n));
        await tx.commit();
        done = c + 1;
      } catch (e) {
        failure = describe(e);
        tx.rollback();
      }
    }
    // A failure is sticky: the next commit fails the same way.
    let again = null;
    if (failure) {
      try {
        await db.set('after-failure', 'x');
      } catch (e) {
        again = describe(e);
      }
    }
    const stats = db.stats();
    let closeError = null;
    try {
      await db.close();
    } catch (e) {
      closeError = describe(e);
    }
    return {
      acked: done, failure, again, closeError, pool: stats.pool, filesPerLevel: stats.filesPerLevel,
    };
  }

  const { db } = await openWithRoom(name, maxSlots);
  for (let c = 0; c < acked; c++) {
    for (let n = 0; n < PER_COMMIT; n++) {
      const v = text(db.get(key(c, n)));
      check(v === value(c, n), `acknowledged ${key(c, n)} = ${v && v.slice(0, 30)}`);
    }
  }
  const count = db.count();
  check(count >= acked * PER_COMMIT, `count ${count} < ${acked * PER_COMMIT}`);
  check(db.get('after-failure') === undefined, 'the commit that failed is not there');
  // Writable again, and a flush finds a slot now.
  await db.set('after-reopen', 'yes');
  await db.flush();
  check(text(db.get('after-reopen')) === 'yes', 'write after reopening');
  const stats = db.stats();
  await db.close();
  return { count, pool: stats.pool, filesPerLevel: stats.filesPerLevel };
});
