// The worker script the main-thread client (index.js) starts: it runs the worker API
// (database.js) and answers the client's requests.
//
// Requests arrive in batches, one postMessage per turn of the client's event loop:
// { batch: [{ id, op, args }] }. Each gets one reply { id, ok, result } or { id, ok: false,
// error: { code, message } }; replies of one turn also travel together, and every buffer in a
// result is transferred, not copied. Transactions and iterators are named by ids the client
// chooses, so a client can begin, write and commit in one message.

import { open, deleteDatabase } from './database.js';
import { unpackWrites } from './codec.js';
import { SkvError, asSkvError } from './errors.js';
import { listDatabases } from './slots.js';

const dbs = new Map();    // client db id -> Database
const txs = new Map();    // client tx id -> Transaction, or the SkvError its begin gave
const iters = new Map();  // client iterator id -> RangeIterator

function lookup(map, id, what) {
  const x = map.get(id);
  if (x === undefined) throw new SkvError('closed', `the ${what} is closed`);
  if (x instanceof SkvError) throw x;
  return x;
}

const ops = {
  async open(name, options) {
    const db = await open(name, options);
    const id = dbs.size === 0 ? 1 : Math.max(...dbs.keys()) + 1;
    dbs.set(id, db);
    return id;
  },
  async close(db) {
    const d = dbs.get(db);
    if (!d) return;
    dbs.delete(db);
    for (const [id, t] of txs) if (!(t instanceof SkvError) && t.db === d) txs.delete(id);
    for (const [id, it] of iters) if (it.db === d) iters.delete(id);
    await d.close();
  },
  listDatabases() {
    return listDatabases();
  },
  deleteDatabase(name) {
    return deleteDatabase(name);
  },
  begin(db, tx, mode) {
    try {
      txs.set(tx, lookup(dbs, db, 'database').begin(mode));
    } catch (e) {
      txs.set(tx, asSkvError(e));
      throw e;
    }
  },
  // The client does not wait for its writes before it commits, so a refused write fails the
  // whole transaction: it is rolled back and every later request on it gets the same error.
  writes(tx, packed) {
    const t = lookup(txs, tx, 'transaction');
    try {
      for (const [kind, key, value] of unpackWrites(packed)) {
        if (kind === 1) t.set(key, value);
        else t.delete(key);
      }
    } catch (e) {
      t.rollback();
      txs.set(tx, asSkvError(e));
      throw e;
    }
  },
  get(tx, key) {
    return lookup(txs, tx, 'transaction').get(key);
  },
  count(tx, start, end) {
    return lookup(txs, tx, 'transaction').count(start, end);
  },
  // Up to `limit` entries after skipping `offset`: a list of packed batches.
  scan(tx, start, end, options) {
    const iter = lookup(txs, tx, 'transaction').range(start, end, options);
    try {
      if (options.offset) iter.skip(options.offset);
      const out = [];
      let left = options.limit === undefined ? Infinity : options.limit;
      while (left > 0) {
        const packed = iter.nextPacked(Number.isFinite(left) ? Math.min(left, 1 << 16) : 1 << 16,
          4 << 20);
        const view = new DataView(packed.buffer, packed.byteOffset);
        left -= view.getUint32(0, true);
        out.push(packed);
        if (view.getUint32(4, true) === 1) break;
      }
      return out;
    } finally {
      iter.close();
    }
  },
  iterOpen(tx, it, start, end, options) {
    iters.set(it, lookup(txs, tx, 'transaction').range(start, end, options));
  },
  iterNext(it, max) {
    return lookup(iters, it, 'iterator').nextPacked(max);
  },
  iterSkip(it, n) {
    return lookup(iters, it, 'iterator').skip(n);
  },
  iterClose(it) {
    const i = iters.get(it);
    iters.delete(it);
    if (i) i.close();
  },
  savepoint(tx) {
    lookup(txs, tx, 'transaction').savepoint();
  },
  rollbackToSavepoint(tx) {
    lookup(txs, tx, 'transaction').rollbackToSavepoint();
  },
  rollback(tx) {
    const t = txs.get(tx);
    txs.delete(tx);
    if (t && !(t instanceof SkvError)) t.rollback();
  },
  commit(tx, options) {
    const t = lookup(txs, tx, 'transaction');
    txs.delete(tx);
    return t.commit(options);
  },
  flush(db) {
    return lookup(dbs, db, 'database').flush();
  },
  compact(db) {
    return lookup(dbs, db, 'database').compact();
  },
  stats(db) {
    return lookup(dbs, db, 'database').stats();
  },
  exportFiles(db) {
    return lookup(dbs, db, 'database').exportFiles();
  },
};

// Buffers in a result, to transfer.
function transferables(x, out = []) {
  if (x instanceof Uint8Array) out.push(x.buffer);
  else if (Array.isArray(x)) for (const y of x) transferables(y, out);
  return out;
}

const pending = [];
let flushScheduled = false;

function reply(message) {
  pending.push(message);
  if (flushScheduled) return;
  flushScheduled = true;
  queueMicrotask(() => {
    flushScheduled = false;
    const batch = pending.splice(0);
    const transfer = [...new Set(batch.flatMap((m) => (m.ok ? transferables(m.result) : [])))];
    self.postMessage({ batch }, transfer);
  });
}

function run(request) {
  const { id, op, args } = request;
  let result;
  try {
    const fn = ops[op];
    if (!fn) throw new SkvError('not_supported', `unknown request ${op}`);
    result = fn(...args);
  } catch (e) {
    reply({ id, ok: false, error: asSkvError(e).toJSON() });
    return;
  }
  if (result && typeof result.then === 'function') {
    result.then((r) => reply({ id, ok: true, result: r }),
      (e) => reply({ id, ok: false, error: asSkvError(e).toJSON() }));
  } else {
    reply({ id, ok: true, result });
  }
}

self.onmessage = (event) => {
  for (const request of event.data.batch) run(request);
};
