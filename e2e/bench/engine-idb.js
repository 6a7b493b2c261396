// Raw IndexedDB: one object store `kv` with out-of-line string keys and Uint8Array values. Every
// operation is its own transaction; the clients' transactions overlap (the browser queues the
// read-write ones on the store). Writes settle on the transaction's `complete` event, reads on
// the request's `success`.

const NAME = 'idb-bench';
const STORE = 'kv';

const request = (req) => new Promise((resolve, reject) => {
  req.onsuccess = () => resolve(req.result);
  req.onerror = () => reject(req.error);
});

function deleteDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(NAME);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
    req.onblocked = () => reject(new Error('deleteDatabase blocked'));
  });
}

// The workload's values are views into shared slabs (workload.js). IndexedDB stores a view by
// cloning its whole buffer, so each value is copied into a buffer of its own first, as an
// application's own value would be.
const own = (v) => v.slice();

export async function openEngine(config) {
  await deleteDb();
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const durability = config.sync ? 'strict' : 'relaxed';

  // Runs `body(store)` in a read-write transaction and resolves when it has committed.
  const write = (body) => new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, 'readwrite', { durability });
    body(tx.objectStore(STORE));
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error || new Error('aborted'));
    tx.commit();
  });
  const store = () => db.transaction(STORE, 'readonly').objectStore(STORE);

  // From the first key: skip `skip` entries with a key cursor, then fetch `limit` keys (or
  // pairs) from there with one getAllKeys/getAll.
  const scan = async (skip, limit, withValues) => {
    const s = store();
    let range = null;
    if (skip > 0) {
      const req = s.openKeyCursor();
      let first = true;
      const key = await new Promise((resolve, reject) => {
        req.onsuccess = () => {
          const c = req.result;
          if (!c) resolve(undefined);
          else if (first) {
            first = false;
            c.advance(skip);
          } else resolve(c.key);
        };
        req.onerror = () => reject(req.error);
      });
      if (key === undefined) return 0;
      range = IDBKeyRange.lowerBound(key);
    }
    const rows = await request(withValues ? s.getAll(range, limit) : s.getAllKeys(range, limit));
    return rows.length;
  };

  return {
    name: 'IndexedDB',
    durability: config.sync
      ? "transaction durability 'strict' (complete fires after the data is flushed to disk)"
      : "transaction durability 'relaxed' (complete fires before the OS flush)",
    create: (k, v) => write((s) => s.add(own(v), k)),
    update: (k, v) => write((s) => s.put(own(v), k)),
    remove: (k) => write((s) => s.delete(k)),
    read: (k) => request(store().get(k)).then((v) => v !== undefined),
    createBatch: (rows) => write((s) => {
      for (const [k, v] of rows) s.add(own(v), k);
    }),
    updateBatch: (rows) => write((s) => {
      for (const [k, v] of rows) s.put(own(v), k);
    }),
    removeBatch: (keys) => write((s) => {
      for (const k of keys) s.delete(k);
    }),
    readBatch: (keys) => new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, 'readonly');
      const s = tx.objectStore(STORE);
      let found = 0;
      for (const k of keys) {
        s.get(k).onsuccess = (e) => {
          if (e.target.result !== undefined) found++;
        };
      }
      tx.oncomplete = () => resolve(found);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error || new Error('aborted'));
    }),
    countAll: () => request(store().count()),
    scan,
    stats: () => ({}),
    close: async () => {
      db.close();
      await deleteDb();
    },
  };
}
