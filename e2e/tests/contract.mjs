// The API contract of both entry points: bad input is a named SkvError ('invalid_argument') that
// loses nothing and commits nothing, never a silent no-op or a hang; calls typed as returning a
// promise reject instead of throwing; a refused open leaves no database behind; transaction()
// retries conflicts. The main-thread client is checked from the page, the worker API from a
// worker (pages/contract-worker.js), and the worker protocol (server.js) by raw messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const browser = usePage();

const evaluate = (fn, arg) => browser.page.evaluate(fn, arg);

test('client: set and delete refuse keys and values that are not strings or bytes', async () => {
  const r = await evaluate(async () => {
    const { open, deleteDatabase } = window.skv;
    const { outcome } = window.outcome;
    await deleteDatabase('bad-input');
    const db = await open('bad-input');
    await db.set('keep', 'kept');
    const before = await db.stats();
    const bad = [{ name: 'Ada' }, undefined, null, 42, 0, [1, 2], true, false, 1n];
    const out = {};
    for (const [i, x] of bad.entries()) {
      out[`set value #${i}`] = await outcome(() => db.set(`k${i}`, x));
      out[`set key #${i}`] = await outcome(() => db.set(x, 'value'));
      out[`delete key #${i}`] = await outcome(() => db.delete(x));
    }
    out['delete 42'] = await outcome(() => db.delete(42));
    const after = await db.stats();
    const result = {
      out,
      sequenceMoved: after.lastSequence - before.lastSequence,
      count: await db.count(),
      kept: await db.get('keep', { as: 'string' }),
    };
    await db.close();
    return result;
  });
  for (const [what, got] of Object.entries(r.out)) assert.equal(got, 'invalid_argument', what);
  assert.equal(r.sequenceMoved, 0, 'nothing was committed');
  assert.equal(r.count, 1);
  assert.equal(r.kept, 'kept');
});

test('client: a refused write fails the commit, writes nothing, and is no unhandled rejection',
  async () => {
    const r = await evaluate(async () => {
      const { open, deleteDatabase } = window.skv;
      const { outcome, watchUnhandled } = window.outcome;
      await deleteDatabase('refused-write');
      const db = await open('refused-write');
      const settle = watchUnhandled(window);
      // Refused on the main thread (a value of the wrong type), writes not awaited as the README
      // shows them.
      const a = db.begin();
      a.set('a1', 'one');
      a.set('a2', { not: 'bytes' });
      a.set('a3', 'three');
      const typeError = await outcome(() => a.commit());
      // Refused by the engine in the worker (an empty key).
      const b = db.begin();
      b.set('b1', 'one');
      b.set('', 'empty key');
      b.set('b3', 'three');
      const engineError = await outcome(() => b.commit());
      const longKey = await outcome(() => db.set('x'.repeat(65536), 'too long'));
      // Refused because the transaction is read-only.
      const c = db.begin('readonly');
      c.set('c1', 'one');
      const readOnly = await outcome(() => c.commit());
      // An awaited refused write still rejects.
      const d = db.begin();
      const awaited = await outcome(() => d.set('d1', 7));
      const later = await outcome(() => d.get('d1'));
      d.rollback();
      const unhandled = await settle();
      const result = {
        typeError, engineError, longKey, readOnly, awaited, later, unhandled,
        count: await db.count(),
      };
      await db.close();
      return result;
    });
    assert.equal(r.typeError, 'invalid_argument');
    assert.equal(r.engineError, 'invalid_argument');
    assert.equal(r.longKey, 'invalid_argument');
    assert.equal(r.readOnly, 'read_only');
    assert.equal(r.awaited, 'invalid_argument');
    assert.equal(r.later, 'invalid_argument', 'the failed transaction keeps failing');
    assert.deepEqual(r.unhandled, [], 'no unhandled rejection');
    assert.equal(r.count, 0, 'no write of a failed transaction was committed');
  });

test('client: bad numbers are invalid_argument, never a hang', async () => {
  const r = await evaluate(async () => {
    const { open, deleteDatabase } = window.skv;
    const { outcome } = window.outcome;
    await deleteDatabase('numbers');
    const db = await open('numbers');
    const tx = db.begin();
    for (let i = 0; i < 10; i++) tx.set(`k${i}`, `v${i}`);
    await tx.commit();
    const out = {};
    out['scan limit 1.5'] = await outcome(() => db.scan(undefined, undefined, { limit: 1.5 }));
    // The database still answers after that.
    out['count after'] = await outcome(() => db.count());
    for (const limit of [-1, 0.5, NaN, '3', null]) {
      out[`scan limit ${String(limit)}`] = await outcome(() => db.scan(undefined, undefined, { limit }));
    }
    for (const offset of [-1, 2.5, NaN, Infinity, '1']) {
      out[`scan offset ${String(offset)}`] =
        await outcome(() => db.scan(undefined, undefined, { offset }));
    }
    const iterate = (options) => async () => {
      for await (const entry of db.range(undefined, undefined, options)) void entry;
    };
    for (const batchSize of [0, -1, 1.5, NaN, 1e9, '8']) {
      out[`range batchSize ${String(batchSize)}`] = await outcome(iterate({ batchSize }));
      out[`tx.range batchSize ${String(batchSize)}`] = await outcome(async () => {
        for await (const e of db.begin('readonly').range(undefined, undefined, { batchSize })) void e;
      });
    }
    const good = {
      limit: (await db.scan(undefined, undefined, { limit: 3 })).length,
      infinite: (await db.scan(undefined, undefined, { limit: Infinity })).length,
      zero: (await db.scan(undefined, undefined, { limit: 0 })).length,
      offset: (await db.scan(undefined, undefined, { offset: 8 })).length,
    };
    let n = 0;
    for await (const entry of db.range(undefined, undefined, { batchSize: 1 })) n += entry ? 1 : 0;
    good.batchOfOne = n;
    await db.close();
    return { out, good };
  });
  assert.equal(r.out['count after'], 'resolved');
  for (const [what, got] of Object.entries(r.out)) {
    if (what !== 'count after') assert.equal(got, 'invalid_argument', what);
  }
  assert.deepEqual(r.good, { limit: 3, infinite: 10, zero: 0, offset: 2, batchOfOne: 10 });
});

test('client: every open() option is checked before anything is created', async () => {
  const r = await evaluate(async () => {
    const { open, listDatabases } = window.skv;
    const { outcome } = window.outcome;
    const numeric = ['reserveSlots', 'maxSlots', 'writeBufferBytes', 'memtableSize',
      'maxImmutableMemtables', 'blockSize', 'blockCacheSize', 'bloomBitsPerKey', 'levelBaseBytes',
      'targetFileSize', 'compactionStepBytes', 'l0CompactionTrigger', 'compressionStartLevel'];
    const cases = [
      ['durability', { durability: 'sometimes' }],
      ['compression', { compression: 'lz4' }],
      ['createIfMissing string', { createIfMissing: 'no' }],
      ['waitForLock number', { waitForLock: 1 }],
      ['openWithDamagedSlots', { openWithDamagedSlots: 'yes' }],
      ['misspelt option', { createIfMising: false }],
      ['options not an object', 'fast'],
      ['worker not a Worker', { worker: {} }],
      ['memtable below the engine minimum', { memtableSize: 100 }],
      ['l0 trigger at the write stop', { l0CompactionTrigger: 20 }],
      ['compression from L0', { compressionStartLevel: 0 }],
      ['compression below the last level', { compressionStartLevel: 8 }],
    ];
    for (const name of numeric) {
      for (const bad of [1.5, -1, NaN, '64', 2 ** 60]) cases.push([`${name} ${bad}`, { [name]: bad }]);
    }
    const out = {};
    for (const [i, [what, options]] of cases.entries()) {
      out[what] = await outcome(() => open(`refused-open-${i}`, options));
    }
    const badNames = {};
    for (const name of ['', 'a/b', '..', 'x'.repeat(201), 42, undefined]) {
      badNames[String(name).slice(0, 20)] = await outcome(() => open(name));
    }
    // Refused by the engine after the worker started: a pool too small to open in.
    out['maxSlots too small for the engine'] = await outcome(() => open('refused-open-pool', { maxSlots: 1 }));
    const listed = (await listDatabases()).filter((n) => n.startsWith('refused-open'));
    const reopen = await outcome(() => open('refused-open-0', { createIfMissing: false }));
    return { out, badNames, listed, reopen };
  });
  for (const [what, got] of Object.entries(r.out)) {
    const want = what === 'maxSlots too small for the engine' ? 'quota' : 'invalid_argument';
    assert.equal(got, want, what);
  }
  for (const [what, got] of Object.entries(r.badNames)) assert.equal(got, 'invalid_argument', what);
  assert.deepEqual(r.listed, [], 'a refused open left a database behind');
  assert.equal(r.reopen, 'not_found');
});

test('client: get and scan check `as`; unknown options are refused', async () => {
  const r = await evaluate(async () => {
    const { open, deleteDatabase } = window.skv;
    const { outcome } = window.outcome;
    await deleteDatabase('as-option');
    const db = await open('as-option');
    await db.set('k', 'v');
    const out = {
      'get as strin': await outcome(() => db.get('k', { as: 'strin' })),
      'tx.get as strin': await outcome(() => db.begin('readonly').get('k', { as: 'strin' })),
      'scan as strin': await outcome(() => db.scan(undefined, undefined, { as: 'strin' })),
      'get unknown option': await outcome(() => db.get('k', { encoding: 'utf8' })),
      'commit durability': await outcome(() => db.set('k', 'v', { durability: 'always' })),
      'begin mode': await outcome(async () => db.begin('rw')),
    };
    const value = await db.get('k', { as: 'string' });
    const bytes = await db.get('k', { as: 'bytes' });
    await db.close();
    return { out, value, bytes: bytes instanceof Uint8Array };
  });
  for (const [what, got] of Object.entries(r.out)) assert.equal(got, 'invalid_argument', what);
  assert.equal(r.value, 'v');
  assert.equal(r.bytes, true);
});

test('worker protocol: server.js checks numbers itself', async () => {
  const r = await evaluate(async () => {
    await window.skv.deleteDatabase('protocol');
    const { rawProtocol } = await import('/e2e/pages/raw-protocol.js');
    const { worker, send, code } = rawProtocol();
    const db = (await send('open', ['protocol', {}])).result;
    const out = {};
    out.begin = await code('begin', [db, 1000, 'readwrite']);
    out.scanFraction = await code('scan', [1000, '', '', { limit: 1.5 }]);
    out.scanNegative = await code('scan', [1000, '', '', { offset: -3 }]);
    out.iterOpen = await code('iterOpen', [1000, 1001, '', '', {}]);
    out.iterNextFraction = await code('iterNext', [1001, 0.5]);
    out.iterNextZero = await code('iterNext', [1001, 0]);
    out.iterSkipFraction = await code('iterSkip', [1001, 0.5]);
    out.after = await code('count', [1000, '', '']);
    await code('close', [db]);
    worker.terminate();
    return out;
  });
  assert.deepEqual(r, {
    begin: 'ok', scanFraction: 'invalid_argument', scanNegative: 'invalid_argument',
    iterOpen: 'ok', iterNextFraction: 'invalid_argument', iterNextZero: 'invalid_argument',
    iterSkipFraction: 'invalid_argument', after: 'ok',
  });
});

test('client: transaction() commits, retries conflicts, and returns the result', async () => {
  const r = await evaluate(async () => {
    const { open, deleteDatabase } = window.skv;
    const { outcome } = window.outcome;
    await deleteDatabase('retries');
    const db = await open('retries');
    await db.set('counter', '0');
    // Every attempt but the last meets a competing commit of the same key.
    let attempts = 0;
    const result = await db.transaction(async (tx) => {
      attempts++;
      const n = Number(await tx.get('counter', { as: 'string' }));
      if (attempts < 3) await db.set('counter', String(n + 100));
      tx.set('counter', String(n + 1));
      return `attempt ${attempts}`;
    }, { retries: 5 });
    const value = await db.get('counter', { as: 'string' });
    let tries = 0;
    const exhausted = await outcome(() => db.transaction(async (tx) => {
      tries++;
      await tx.get('counter');
      await db.set('counter', 'other');
      tx.set('counter', 'mine');
    }, { retries: 1 }));
    const thrown = await outcome(() => db.transaction(async (tx) => {
      tx.set('never', 'x');
      throw new RangeError('from the callback');
    }));
    const badOptions = await outcome(() => db.transaction(async () => {}, { retries: -1 }));
    const never = await db.get('never');
    await db.close();
    return { result, attempts, value, exhausted, tries, thrown, badOptions, never };
  });
  assert.equal(r.result, 'attempt 3');
  assert.equal(r.attempts, 3);
  assert.equal(r.value, '201');
  assert.equal(r.exhausted, 'conflict');
  assert.equal(r.tries, 2, 'one try and one retry');
  assert.equal(r.thrown, 'RangeError: from the callback');
  assert.equal(r.badOptions, 'invalid_argument');
  assert.equal(r.never, undefined);
});

test('client: SkvError keeps its cause; the classes show only their API', async () => {
  const r = await evaluate(async () => {
    const { open, deleteDatabase, SkvError } = window.skv;
    const inner = new TypeError('inner');
    const wrapped = new SkvError('io', 'outer', { cause: inner });
    // The form errors take from the worker to the page keeps the cause's name and message.
    const carried = SkvError.from(JSON.parse(JSON.stringify(wrapped)));
    await deleteDatabase('surface');
    const db = await open('surface');
    const tx = db.begin();
    const it = tx.range();
    const own = {
      db: Object.getOwnPropertyNames(db),
      tx: Object.getOwnPropertyNames(tx),
      it: Object.getOwnPropertyNames(it),
    };
    await it.return();
    tx.rollback();
    await db.close();
    return {
      sameCause: wrapped.cause === inner,
      carried: [carried.cause && carried.cause.name, carried.cause && carried.cause.message],
      own,
    };
  });
  assert.equal(r.sameCause, true);
  assert.deepEqual(r.carried, ['TypeError', 'inner']);
  assert.deepEqual(r.own, { db: ['name'], tx: ['mode'], it: [] });
});

test('worker API: the same contract', async () => {
  const r = await evaluate(() => window.runWorker('contract-worker.js', { name: 'contract-worker' }));
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  const { promiseTyped, sync, limits, numbers, glue, retried, ranges, own } = r.result;
  assert.deepEqual(limits, {
    'key of 65535 bytes': 'returned', 'key of 65536 bytes': 'invalid_argument',
    'empty key': 'invalid_argument', 'value of 64 MiB + 1': 'invalid_argument',
  });
  for (const [what, got] of Object.entries(promiseTyped)) assert.equal(got, 'invalid_argument', what);
  for (const [what, got] of Object.entries(sync)) assert.equal(got, 'invalid_argument', what);
  for (const [what, got] of Object.entries(numbers)) assert.equal(got, 'invalid_argument', what);
  assert.deepEqual(glue, {
    fraction: 'invalid_argument', string: 'invalid_argument', negative: 'invalid_argument',
    durabilityNumber: 'invalid_argument',
  });
  assert.deepEqual(retried, { result: 'done', attempts: 2, value: 'mine' });
  assert.deepEqual(ranges, { entries: 3, openAfter: 0, brokenOpenAfter: 0, afterCommit: 'closed' });
  assert.deepEqual(own, { db: ['name'], tx: ['mode'], it: [] });
});
