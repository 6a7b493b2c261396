// The scenario of tests/snapshots.mjs, for both APIs (the client in the page, the worker API in
// snapshots-worker.js): `loops` overwrites of one key, each followed by two iterations in
// `pattern` (one to the end, one broken out of), then the table bytes after compaction and the
// transactions and iterators still open. `api` is { open, deleteDatabase } of either API.
export async function snapshotLoops(api, { name, pattern, loops, size }) {
  await api.deleteDatabase(name);
  const db = await api.open(name, { memtableSize: 64 << 10 });
  const range = () => (pattern === 'db.range' ? db.range() : db.begin('readonly').range());
  // The loops run in a function of their own, so no frame of this one still holds an iterator.
  const run = async () => {
    let seen = 0;
    for (let i = 0; i < loops; i++) {
      await db.set('key', crypto.getRandomValues(new Uint8Array(size)));
      for await (const entry of range()) seen += entry ? 1 : 0;
      for await (const entry of range()) {
        seen += entry ? 1 : 0;
        break;
      }
    }
    return seen;
  };
  const seen = await run();
  if (pattern !== 'db.range') {
    // Dropped transactions end once collected: gc() is exposed by the browser's --expose-gc.
    for (let i = 0; i < 3; i++) {
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await db.flush();
  await db.compact();
  const s = await db.stats();
  await db.close();
  return {
    seen,
    tableBytes: s.bytesPerLevel.reduce((a, b) => a + b, 0),
    openTransactions: s.openTransactions,
    openIterators: s.openIterators,
  };
}
