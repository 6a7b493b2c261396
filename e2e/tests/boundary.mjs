// The browser boundary: what reaches the worker and the wasm glue from outside, and what the
// worker does with what it finds in OPFS. Every refusal is a named SkvError, creates nothing, and
// leaves the worker answering.
//  - Database ids are never reused within a worker, and a closed Database answers `closed` to
//    every call, on both APIs, even when another database is open on the same worker.
//  - Wrong-typed and out-of-range open() options are invalid_argument with the real value in the
//    message, refused in JavaScript before the wasm glue is called; the glue itself answers such
//    options (and objects that throw when read) with an error code and never lets a JavaScript
//    exception unwind through its C++ frames, so thousands of them leave the instance working.
//  - OPFS entries in a database's directory that the pool did not create are ignored: never
//    opened, changed or removed.
//  - The worker protocol answers unknown requests ('constructor', '__proto__', ...) and malformed
//    ones with a named error, and ignores messages that are not requests.
// The client is driven from the page, the worker API from pages/boundary-worker.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const LOOPS = 3000;
// A wasm instance corrupted by exceptions may spin instead of failing: no test waits forever.
const LIMIT = { timeout: 60_000 };

const browser = usePage();

const evaluate = (fn, arg) => browser.page.evaluate(fn, arg);

async function inWorker(args) {
  const r = await evaluate((a) => window.runWorker('boundary-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

const CLOSED_CALLS = ['begin', 'range', 'get', 'set', 'delete', 'scan', 'count', 'transaction',
  'flush', 'compact', 'stats', 'exportFiles'];

test('client: on a shared worker, a closed handle answers closed and ids are not reused', LIMIT,
  async () => {
    const r = await evaluate(async () => {
      const { open, deleteDatabase, listDatabases } = window.skv;
      const { outcome, thrown } = window.outcome;
      for (const n of ['client-closed-a', 'client-closed-b']) await deleteDatabase(n);
      const worker = new Worker('/web/src/server.js', { type: 'module' });
      const a = await open('client-closed-a', { worker });
      await a.set('a-key', 'a');
      const pending = a.begin();
      pending.set('pending', 'x');
      const iter = a.begin('readonly').range();
      await a.close();
      const b = await open('client-closed-b', { worker });
      await b.set('b-key', 'b');
      const before = (await b.stats()).lastSequence;
      const calls = {
        begin: thrown(() => a.begin()),
        range: thrown(() => a.range()),
        get: await outcome(() => a.get('b-key')),
        set: await outcome(() => a.set('stray', 'from a')),
        delete: await outcome(() => a.delete('b-key')),
        scan: await outcome(() => a.scan()),
        count: await outcome(() => a.count()),
        transaction: await outcome(() => a.transaction((tx) => {
          tx.set('stray', 'from a');
        })),
        flush: await outcome(() => a.flush()),
        compact: await outcome(() => a.compact()),
        stats: await outcome(() => a.stats()),
        exportFiles: await outcome(() => a.exportFiles()),
        'pending set': await outcome(() => pending.set('stray', 'from a')),
        'pending get': await outcome(() => pending.get('a-key')),
        'pending commit': await outcome(() => pending.commit()),
        'iterator next': await outcome(() => iter.next()),
      };
      const closeAgain = await outcome(() => a.close());
      const other = {
        count: await b.count(),
        bKey: await b.get('b-key', { as: 'string' }),
        stray: (await b.get('stray')) === undefined,
        sequenceMoved: (await b.stats()).lastSequence - before,
      };
      await b.close();
      worker.terminate();
      const listed = (await listDatabases()).filter((n) => n.startsWith('client-closed'));
      return { calls, closeAgain, other, listed };
    });
    for (const what of CLOSED_CALLS) assert.equal(r.calls[what], 'closed', what);
    for (const [what, got] of Object.entries(r.calls)) assert.equal(got, 'closed', what);
    assert.equal(r.closeAgain, 'resolved', 'closing twice');
    assert.deepEqual(r.other, { count: 1, bKey: 'b', stray: true, sequenceMoved: 0 },
      'the database opened after the closed one got none of its calls');
    assert.deepEqual(r.listed, ['client-closed-a', 'client-closed-b']);
  });

test('worker API: a closed handle answers closed to every call', LIMIT, async () => {
  const r = await inWorker({ phase: 'closed', name: 'worker-closed' });
  for (const what of CLOSED_CALLS) assert.equal(r.calls[what], 'closed', what);
  for (const [what, got] of Object.entries(r.calls)) assert.equal(got, 'closed', what);
  assert.equal(r.closeAgain, 'resolved', 'closing twice');
  assert.deepEqual(r.other, { count: 1, bKey: 'b', stray: true, sequenceMoved: 0 });
  assert.deepEqual(r.listed, ['worker-closed-a', 'worker-closed-b']);
});

test('worker protocol: ids are never reused; unknown and malformed requests get named errors',
  LIMIT,
  async () => {
    const r = await evaluate(async () => {
      for (const n of ['proto-a', 'proto-b']) await window.skv.deleteDatabase(n);
      const { rawProtocol } = await import('/e2e/pages/raw-protocol.js');
      const { worker, raw, send, answer, code, errors } = rawProtocol();
      const out = {};

      // Ids: open and close in turn; a closed id stays closed while another database is open.
      const ids = [];
      for (let i = 0; i < 4; i++) {
        const m = await send('open', [i % 2 ? 'proto-b' : 'proto-a', {}]);
        ids.push(m.ok ? m.result : `error ${m.error && m.error.code}`);
        await code('close', [m.result]);
      }
      out.ids = ids;
      const db = (await send('open', ['proto-a', {}])).result;
      out.lastId = db;
      out.closedIdStats = await code('stats', [ids[0]]);
      out.closedIdBegin = await code('begin', [ids[0], 900, 'readwrite']);
      out.closedIdWrite = await code('commit', [900, undefined]);

      // Requests named after what every object inherits, and other unknown ones.
      out.unknown = {};
      for (const op of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf',
        'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__',
        '__lookupGetter__', 'nope', '', 42, null]) {
        const m = await send(op, []);
        out.unknown[String(op)] = m.timeout ? 'timeout'
          : m.ok ? `ok: ${JSON.stringify(m.result)}` : `${m.error.code}: ${m.error.message}`;
      }

      // Malformed requests.
      out.malformed = {
        'args a number': await raw({ op: 'stats', args: 5 }).then(answer),
        'args missing': await raw({ op: 'stats' }).then(answer),
        'db id a string': await code('stats', ['1']),
        'tx id a string': await code('begin', [db, 'x', 'readwrite']),
        'tx id fractional': await code('begin', [db, 1.5, 'readwrite']),
      };
      out.malformed['first begin'] = await code('begin', [db, 500, 'readwrite']);
      out.malformed['begin with a live id'] = await code('begin', [db, 500, 'readwrite']);
      out.malformed['the first still works'] = await code('count', [500, '', '']);
      await code('rollback', [500]);
      out.malformed['iterOpen'] = await code('begin', [db, 501, 'readonly']).then(
        () => code('iterOpen', [501, 502, '', '', {}]));
      out.malformed['iterOpen with a live id'] = await code('iterOpen', [501, 502, '', '', {}]);
      await code('rollback', [501]);

      // Write buffers that lie about their lengths, or are not buffers: the transaction fails
      // and commits nothing.
      const packed = (kind, klen, vlen, body) => {
        const b = new Uint8Array(9 + body.length);
        const v = new DataView(b.buffer);
        v.setUint8(0, kind);
        v.setUint32(1, klen, true);
        v.setUint32(5, vlen, true);
        b.set(body, 9);
        return b.buffer;
      };
      const writes = {
        'key length past the end': packed(1, 100, 0, new Uint8Array(5).fill(65)),
        'value length past the end': packed(1, 1, 100, new Uint8Array(5).fill(65)),
        'unknown kind': packed(7, 1, 1, new Uint8Array(2).fill(65)),
        'a torn header': new Uint8Array([1, 1, 0]).buffer,
        'not a buffer': 'k=v',
      };
      out.writes = {};
      let tx = 600;
      for (const [what, buf] of Object.entries(writes)) {
        tx++;
        await code('begin', [db, tx, 'readwrite']);
        const transfer = buf instanceof ArrayBuffer ? [buf] : [];
        out.writes[what] = [
          await code('writes', [tx, buf], transfer), await code('commit', [tx, undefined]),
        ];
      }
      await code('begin', [db, 700, 'readonly']);
      out.countAfter = (await send('count', [700, '', ''])).result;

      // Messages that are not requests are ignored, and the worker keeps answering.
      worker.postMessage('hello');
      worker.postMessage({ batch: 5 });
      worker.postMessage({ batch: [null, 7, { op: 'stats' }, { id: 'x', op: 'stats', args: [] }] });
      worker.postMessage(null);
      out.stillAnswers = await code('stats', [db]);
      out.list = await code('listDatabases', []);
      out.errors = errors();
      await code('close', [db]);
      worker.terminate();
      return out;
    });
    assert.equal(new Set(r.ids).size, r.ids.length, `ids reused: ${JSON.stringify(r.ids)}`);
    assert.ok(!r.ids.includes(r.lastId), `id ${r.lastId} reused`);
    assert.equal(r.closedIdStats, 'closed');
    assert.equal(r.closedIdBegin, 'closed');
    assert.equal(r.closedIdWrite, 'closed', 'a transaction begun on a closed id stays failed');
    for (const [op, got] of Object.entries(r.unknown)) {
      assert.match(got, /^not_supported: unknown request/, `request ${op}`);
    }
    for (const [what, got] of Object.entries(r.malformed)) {
      const ok = ['first begin', 'the first still works', 'iterOpen'].includes(what);
      assert.equal(got, ok ? 'ok' : 'invalid_argument', what);
    }
    for (const [what, got] of Object.entries(r.writes)) {
      assert.deepEqual(got, ['invalid_argument', 'invalid_argument'], what);
    }
    assert.equal(r.countAfter, 0, 'no malformed write was committed');
    assert.equal(r.stillAnswers, 'ok');
    assert.equal(r.list, 'ok');
    assert.equal(r.errors, 0, 'no error escaped the worker');
  });

test('client: wrong-typed and out-of-range open options are invalid_argument naming the value',
  LIMIT,
  async () => {
    const r = await evaluate(async () => {
      const { badOptions } = await import('/e2e/pages/bad-options.js');
      const { open, listDatabases, SkvError } = window.skv;
      const worker = new Worker('/web/src/server.js', { type: 'module' });
      const out = {};
      const attempt = async (what, options, value) => {
        try {
          await open(`client-options-${what}`, options);
          out[what] = { code: 'opened' };
        } catch (e) {
          const code = e instanceof SkvError ? e.code : `${e.name}: ${e.message}`;
          out[what] = { code, message: e.message, value };
        }
      };
      for (const [what, options, value] of badOptions()) await attempt(what, options, value);
      // The same with a worker given: the option is added to each object as it is (getters and
      // proxies stay; a revoked proxy cannot take it and is passed alone).
      for (const [what, options, value] of badOptions()) {
        try {
          Object.defineProperty(options, 'worker', { value: worker, enumerable: true });
        } catch {
          // the revoked proxy
        }
        await attempt(`${what} (given worker)`, options, value);
      }
      const listed = (await listDatabases()).filter((n) => n.startsWith('client-options'));
      const db = await open('client-options-good', { worker, memtableSize: 1 << 20 });
      await db.set('k', 'v');
      const after = await db.get('k', { as: 'string' });
      await db.close();
      await window.skv.deleteDatabase('client-options-good');
      worker.terminate();
      return { out, listed, after };
    });
    for (const [what, got] of Object.entries(r.out)) {
      assert.equal(got.code, 'invalid_argument', `${what}: ${JSON.stringify(got)}`);
      if (got.value) assert.ok(got.message.includes(got.value), `${what}: ${got.message}`);
    }
    assert.deepEqual(r.listed, [], 'a refused open created a database');
    assert.equal(r.after, 'v', 'the worker opens a database afterwards');
  });

test('worker API: wrong-typed and out-of-range open options are invalid_argument naming the value',
  LIMIT,
  async () => {
    const r = await inWorker({ phase: 'options', name: 'worker-options' });
    for (const [what, got] of Object.entries(r.out)) {
      assert.equal(got.code, 'invalid_argument', `${what}: ${JSON.stringify(got)}`);
      assert.equal(got.isSkvError, true, what);
      if (got.value) assert.ok(got.message.includes(got.value), `${what}: ${got.message}`);
    }
    assert.deepEqual(r.listed, [], 'a refused open created a database');
    assert.equal(r.after, 'v', 'the worker opens a database afterwards');
  });

test(`worker API and wasm glue: ${LOOPS} refused opens, then working databases in the same worker`,
  LIMIT,
  async () => {
    const r = await inWorker({ phase: 'loop', name: 'refusals', loops: LOOPS });
    console.log(`${LOOPS} refused opens through the API in ${Math.round(r.apiMs)} ms; ` +
      `everything in ${Math.round(r.ms)} ms; glue messages: ${JSON.stringify(r.messages)}`);
    assert.deepEqual(r.api, { invalid_argument: LOOPS });
    assert.deepEqual(r.listed, [], 'a refused open created a database');
    assert.deepEqual(r.apiAfter, { count: 2000, sample: 'value 1234' });
    assert.deepEqual(r.glue, { 'as expected': LOOPS }, 'every glue open returned its error code');
    assert.deepEqual(r.glueAfter, { count: 500, sample: 'v250' });
  });

test('worker API: foreign entries in a database directory are never touched', LIMIT, async () => {
  const r = await inWorker({ phase: 'stray', name: 'stray-entries' });
  console.log(`made ${JSON.stringify(r.made)}`);
  assert.equal(r.reopened, 'resolved', 'the database opens beside foreign entries');
  assert.equal(r.ourSlots, r.slotsBefore, 'the pool was every slot file');
  assert.deepEqual(r.afterReopen, { count: 201, k0100: 'v100' });
  assert.ok(r.slotsAfter > r.slotsBefore, `the pool grew: ${r.slotsBefore} -> ${r.slotsAfter}`);
  assert.equal(r.slotFilesAfter, r.slotsFinal, 'no foreign entry was taken into the pool');
  assert.deepEqual(r.again, { count: 201, after: 'stray' });
  assert.deepEqual(r.strays.after, r.strays.before, 'foreign entries unchanged');
  assert.equal(r.deleted, 'resolved');
  assert.deepEqual(r.afterDelete.strays, r.strays.before, 'deleteDatabase left foreign entries');
  assert.equal(r.afterDelete.slotFiles, 0, 'deleteDatabase removed the pool');
  assert.equal(r.afterDelete.listed, false, 'a directory without a pool is no database');
});
