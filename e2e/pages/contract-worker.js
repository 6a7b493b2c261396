// The worker API's side of the contract test (tests/contract.mjs): calls typed as promises reject
// and never throw, synchronous calls throw invalid_argument for bad input, numbers are checked
// (here and at the wasm glue), transaction() retries a conflict, db.range() ends its own
// transaction, and an iterator whose transaction ended says so.
import { open, deleteDatabase } from '/web/src/worker.js';
import createSkvCore from '/web/dist/skv-core.mjs';
import { serve } from './harness.js';
import { outcome, thrown } from './outcome.js';

// Runs `fn(tx)` in a transaction that is rolled back afterwards.
function inTx(db, mode, fn) {
  return () => {
    const tx = db.begin(mode);
    try {
      return fn(tx);
    } finally {
      tx.rollback();
    }
  };
}

function held(db) {
  const s = db.stats();
  return s.openTransactions + s.openIterators;
}

// The glue's own check of open() options, called directly with options the wrapper would
// refuse first.
async function glueChecks() {
  const core = await createSkvCore({ skvTables: [] });
  const glueOpen = (options) => {
    const w = new core.WebDb();
    try {
      return w.open('glue-check', 0, options) === 0 ? 'opened' : w.errorCode();
    } catch (e) {
      return `threw ${e && e.name}`;
    } finally {
      w.close();
      w.delete();
    }
  };
  return {
    fraction: glueOpen({ bloomBitsPerKey: 10.5 }),
    string: glueOpen({ memtableSize: '65536' }),
    negative: glueOpen({ reserveSlots: -1 }),
    durabilityNumber: glueOpen({ durability: 5 }),
  };
}

serve(async ({ name }) => {
  await deleteDatabase(name);
  const db = await open(name);
  const setup = db.begin();
  for (let i = 0; i < 5; i++) setup.set(`k${i}`, `v${i}`);
  await setup.commit();

  const pending = db.begin();
  const promiseTyped = {
    'db.set value object': await outcome(() => db.set('k', { name: 'Ada' })),
    'db.set value undefined': await outcome(() => db.set('k', undefined)),
    'db.set key number': await outcome(() => db.set(42, 'v')),
    'db.delete 42': await outcome(() => db.delete(42)),
    'db.set durability': await outcome(() => db.set('k', 'v', { durability: 'sometimes' })),
    'commit durability': await outcome(() => pending.commit({ durability: 'x' })),
    'transaction retries': await outcome(() => db.transaction(() => {}, { retries: 1.5 })),
    'open bad option': await outcome(() => open(`${name}-x`, { durability: 'sometimes' })),
    'open memtableSize 1.5': await outcome(() => open(`${name}-x`, { memtableSize: 65536.5 })),
    'open bad name': await outcome(() => open('')),
    'deleteDatabase bad name': await outcome(() => deleteDatabase('a/b')),
  };
  pending.rollback();

  const sync = {
    'get as strin': thrown(() => db.get('k0', { as: 'strin' })),
    'tx.get as strin': thrown(inTx(db, 'readonly', (tx) => tx.get('k0', { as: 'strin' }))),
    'tx.set value undefined': thrown(inTx(db, 'readwrite', (tx) => tx.set('k', undefined))),
    'tx.set key null': thrown(inTx(db, 'readwrite', (tx) => tx.set(null, 'v'))),
    'tx.delete key number': thrown(inTx(db, 'readwrite', (tx) => tx.delete(42))),
    'begin mode': thrown(() => db.begin('rw')),
  };

  // The engine's limits (core/include/skv/options.h): keys up to 64 KiB - 1, values up to 64 MiB.
  const limits = {
    'key of 65535 bytes': thrown(inTx(db, 'readwrite', (tx) => tx.set(new Uint8Array(65535), 'v'))),
    'key of 65536 bytes': thrown(inTx(db, 'readwrite', (tx) => tx.set(new Uint8Array(65536), 'v'))),
    'empty key': thrown(inTx(db, 'readwrite', (tx) => tx.set('', 'v'))),
    'value of 64 MiB + 1': thrown(inTx(db, 'readwrite',
      (tx) => tx.set('big', new Uint8Array((64 << 20) + 1)))),
  };

  const numbers = {
    'scan limit 1.5': thrown(() => db.scan(undefined, undefined, { limit: 1.5 })),
    'scan offset -1': thrown(() => db.scan(undefined, undefined, { offset: -1 })),
    'scan limit NaN': thrown(() => db.scan(undefined, undefined, { limit: NaN })),
    'range batchSize 0': thrown(() => {
      for (const e of db.range(undefined, undefined, { batchSize: 0 })) void e;
    }),
    'tx.range batchSize -1': thrown(inTx(db, 'readonly', (tx) => {
      for (const e of tx.range(undefined, undefined, { batchSize: -1 })) void e;
    })),
    'tx.range batchSize 2.5': thrown(inTx(db, 'readonly', (tx) => {
      for (const e of tx.range(undefined, undefined, { batchSize: 2.5 })) void e;
    })),
    'skip 1.5': thrown(inTx(db, 'readonly', (tx) => tx.range().skip(1.5))),
    'take -1': thrown(inTx(db, 'readonly', (tx) => tx.range().take(-1))),
  };

  // A conflict on the first attempt, none on the second.
  let attempts = 0;
  const result = await db.transaction(async (tx) => {
    attempts++;
    tx.get('k0');
    if (attempts === 1) await db.set('k0', 'other');
    tx.set('k0', 'mine');
    return 'done';
  });
  const retried = { result, attempts, value: db.get('k0', { as: 'string' }) };

  const before = held(db);
  let entries = 0;
  for (const e of db.range('k0', 'k3')) entries += e ? 1 : 0;
  const openAfter = held(db) - before;
  for (const e of db.range()) {
    void e;
    break;
  }
  for await (const e of db.range()) {
    void e;
    break;
  }
  const brokenOpenAfter = held(db) - before;
  const t = db.begin('readonly');
  const it = t.range();
  it.next();
  await t.commit();
  const afterCommit = thrown(() => it.next());
  const ranges = { entries, openAfter, brokenOpenAfter, afterCommit };

  const tx = db.begin();
  const own = {
    db: Object.getOwnPropertyNames(db),
    tx: Object.getOwnPropertyNames(tx),
    it: Object.getOwnPropertyNames(tx.range()),
  };
  tx.rollback();
  await db.close();
  return { promiseTyped, sync, limits, numbers, glue: await glueChecks(), retried, ranges, own };
});
