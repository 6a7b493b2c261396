// The worker API's side of tests/snapshots.mjs: `loops` overwrites of one key, each followed by
// two iterations (one to the end, one broken out of) in `pattern`; then the table bytes after
// compaction and the transactions and iterators still open.
import { open, deleteDatabase } from '/web/src/worker.js';
import { serve } from './harness.js';

serve(async ({ name, pattern, loops, size }) => {
  await deleteDatabase(name);
  const db = await open(name, { memtableSize: 64 << 10 });
  const range = () => (pattern === 'db.range' ? db.range() : db.begin('readonly').range());
  const run = async () => {
    let seen = 0;
    for (let i = 0; i < loops; i++) {
      await db.set('key', crypto.getRandomValues(new Uint8Array(size)));
      for (const entry of range()) seen += entry ? 1 : 0;
      for await (const entry of range()) {
        seen += entry ? 1 : 0;
        break;
      }
    }
    return seen;
  };
  const seen = await run();
  if (pattern !== 'db.range') {
    for (let i = 0; i < 3; i++) {
      self.gc();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await db.flush();
  await db.compact();
  const s = db.stats();
  await db.close();
  return {
    seen,
    tableBytes: s.bytesPerLevel.reduce((a, b) => a + b, 0),
    openTransactions: s.openTransactions,
    openIterators: s.openIterators,
  };
});
