// skv on the main thread: the client. OPFS sync access handles exist only in dedicated workers,
// so open() starts a module worker running server.js and every call becomes a request to it.
// The API mirrors the worker API (worker.js) with promises:
//
//   import { open } from 'skv';
//   const db = await open('notes');
//   const tx = db.begin();
//   tx.set('note:1', 'hello');
//   await tx.commit();
//   await db.get('note:1', { as: 'string' });   // 'hello'
//   for await (const [key, value] of db.begin('readonly').range('note:', 'note;')) { ... }
//
// Requests made in one turn of the event loop travel in one message (so commits issued together
// share one WAL write in the worker). Writes are packed into one buffer per message and
// transferred; results come back by transfer too.

import { SkvError } from './errors.js';
import { decode, packWrites, toUint8, unpackBatch } from './codec.js';

export { SkvError, ERROR_CODES } from './errors.js';

class Rpc {
  constructor(worker) {
    this.worker = worker;
    this.nextId = 1;
    this.calls = new Map();
    this.outbox = [];
    this.transfer = [];
    this.scheduled = false;
    this.dead = null;
    worker.onmessage = (event) => {
      for (const { id, ok, result, error } of event.data.batch) {
        const call = this.calls.get(id);
        if (!call) continue;
        this.calls.delete(id);
        if (ok) call.resolve(result);
        else call.reject(SkvError.from(error));
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.fail(new SkvError('io', `the skv worker failed: ${event.message || 'unknown error'}`));
    };
  }

  newId() {
    return this.nextId++;
  }

  call(op, args, transfer = []) {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.newId();
    const p = new Promise((resolve, reject) => this.calls.set(id, { resolve, reject }));
    this.outbox.push({ id, op, args });
    this.transfer.push(...transfer);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.send());
    }
    return p;
  }

  // Sends without waiting for the outcome (errors surface on the next call that depends on it).
  post(op, args) {
    this.call(op, args).catch(() => {});
  }

  send() {
    this.scheduled = false;
    const batch = this.outbox.splice(0);
    const transfer = this.transfer.splice(0);
    if (batch.length) this.worker.postMessage({ batch }, transfer);
  }

  fail(error) {
    this.dead = error;
    for (const { reject } of this.calls.values()) reject(error);
    this.calls.clear();
  }

  terminate() {
    this.worker.terminate();
    this.fail(new SkvError('closed', 'the database is closed'));
  }
}

function bound(x) {
  return x === undefined || x === null ? '' : toUint8(x, 'range bound');
}

function unpackAll(batches, as) {
  const out = [];
  for (const b of batches) out.push(...unpackBatch(b, as).entries);
  return out;
}

// Starts the worker; `options.worker` may give one already running server.js.
export async function open(name, options = {}) {
  const { worker: given, ...rest } = options;
  const worker = given || new Worker(new URL('./server.js', import.meta.url), { type: 'module' });
  const rpc = new Rpc(worker);
  try {
    const id = await rpc.call('open', [name, rest]);
    return new Database(rpc, id, name, !given);
  } catch (e) {
    if (!given) rpc.terminate();
    throw e;
  }
}

// The databases of this origin (starts a short-lived worker).
export async function listDatabases() {
  return withWorker((rpc) => rpc.call('listDatabases', []));
}

// Removes a database and its files; `busy` while it is open anywhere.
export async function deleteDatabase(name) {
  return withWorker((rpc) => rpc.call('deleteDatabase', [name]));
}

async function withWorker(fn) {
  const rpc = new Rpc(new Worker(new URL('./server.js', import.meta.url), { type: 'module' }));
  try {
    return await fn(rpc);
  } finally {
    rpc.terminate();
  }
}

export class Database {
  constructor(rpc, id, name, ownsWorker) {
    this.rpc = rpc;
    this.id = id;
    this.name = name;
    this.ownsWorker = ownsWorker;
  }

  // Starts a transaction: 'readwrite' (default) or 'readonly'. Returns at once; the worker
  // begins it with the first request.
  begin(mode = 'readwrite') {
    const tx = new Transaction(this.rpc, this.rpc.newId(), mode);
    this.rpc.post('begin', [this.id, tx.id, mode]);
    return tx;
  }

  async get(key, options) {
    const tx = this.begin('readonly');
    try {
      return await tx.get(key, options);
    } finally {
      tx.rollback();
    }
  }

  set(key, value, options) {
    const tx = this.begin();
    tx.set(key, value).catch(() => {});
    return tx.commit(options);
  }

  delete(key, options) {
    const tx = this.begin();
    tx.delete(key).catch(() => {});
    return tx.commit(options);
  }

  async scan(start, end, options) {
    const tx = this.begin('readonly');
    try {
      return await tx.scan(start, end, options);
    } finally {
      tx.rollback();
    }
  }

  async count(start, end) {
    const tx = this.begin('readonly');
    try {
      return await tx.count(start, end);
    } finally {
      tx.rollback();
    }
  }

  flush() {
    return this.rpc.call('flush', [this.id]);
  }

  compact() {
    return this.rpc.call('compact', [this.id]);
  }

  stats() {
    return this.rpc.call('stats', [this.id]);
  }

  exportFiles() {
    return this.rpc.call('exportFiles', [this.id]);
  }

  async close() {
    if (this.rpc.dead) return;
    try {
      await this.rpc.call('close', [this.id]);
    } finally {
      if (this.ownsWorker) this.rpc.terminate();
    }
  }
}

export class Transaction {
  constructor(rpc, id, mode) {
    this.rpc = rpc;
    this.id = id;
    this.mode = mode;
    this.writes = [];
    this.waiters = [];
    this.finished = false;
  }

  checkOpen() {
    if (this.finished) throw new SkvError('closed', 'the transaction is finished');
  }

  // Queued writes go out in one packed buffer, ahead of whatever request comes next.
  queueWrite(kind, key, value) {
    this.checkOpen();
    toUint8(key, 'key');
    if (kind === 1) toUint8(value, 'value');
    if (this.writes.length === 0) queueMicrotask(() => this.sendWrites());
    this.writes.push([kind, key, value]);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  sendWrites() {
    if (this.writes.length === 0) return;
    const packed = packWrites(this.writes.splice(0));
    const waiters = this.waiters.splice(0);
    this.rpc.call('writes', [this.id, packed], [packed]).then(
      () => waiters.forEach((w) => w.resolve()),
      (e) => waiters.forEach((w) => w.reject(e)));
  }

  request(op, args, transfer) {
    this.checkOpen();
    this.sendWrites();
    return this.rpc.call(op, [this.id, ...args], transfer);
  }

  set(key, value) {
    try {
      return this.queueWrite(1, key, value);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  delete(key) {
    try {
      return this.queueWrite(2, key);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async get(key, options) {
    const k = toUint8(key, 'key');
    return decode(await this.request('get', [k]), options && options.as);
  }

  count(start, end) {
    return this.request('count', [bound(start), bound(end)]);
  }

  async scan(start, end, options = {}) {
    const { as, ...rest } = options;
    return unpackAll(await this.request('scan', [bound(start), bound(end), rest]), as);
  }

  // An async iterator over [start, end) (options: reverse, keysOnly, as, batchSize).
  range(start, end, options = {}) {
    const itId = this.rpc.newId();
    const { as, batchSize = 256, ...rest } = options;
    const opened = this.request('iterOpen', [itId, bound(start), bound(end), rest]);
    opened.catch(() => {});
    const rpc = this.rpc;
    let buffer = [];
    let at = 0;
    let done = false;
    let closed = false;
    const close = () => {
      if (!closed) {
        closed = true;
        rpc.post('iterClose', [itId]);
      }
    };
    return {
      async next() {
        await opened;
        if (at === buffer.length && !done && !closed) {
          const batch = unpackBatch(await rpc.call('iterNext', [itId, batchSize]), as);
          buffer = batch.entries;
          at = 0;
          done = batch.done;
        }
        if (at === buffer.length) {
          close();
          return { done: true, value: undefined };
        }
        return { done: false, value: buffer[at++] };
      },
      async return() {
        close();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  savepoint() {
    return this.request('savepoint', []);
  }

  rollbackToSavepoint() {
    return this.request('rollbackToSavepoint', []);
  }

  commit(options) {
    try {
      const p = this.request('commit', [options]);
      this.finished = true;
      return p;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  rollback() {
    if (this.finished) return Promise.resolve();
    this.finished = true;
    this.writes = [];
    const waiters = this.waiters.splice(0);
    waiters.forEach((w) => w.reject(new SkvError('closed', 'the transaction was rolled back')));
    return this.rpc.call('rollback', [this.id]).catch(() => {});
  }
}
