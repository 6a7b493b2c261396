// Transaction.getAsync(): the read runs as a task on the engine's executor in the worker
// (Transaction::get_async) and gives what get() gives, over keys in tables and in the memtable,
// absent, deleted, and the transaction's own writes and deletes; it settles on a later turn;
// bad keys and options, a finished transaction and a closed database are refused by name through
// the promise (never thrown, never a hang). Checked through the worker API and the main-thread
// client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const harness = usePage();

test('worker API: getAsync gives what get gives, on a later turn, and refuses by name',
  async () => {
    const r = await harness.page.evaluate(
      (a) => window.runWorker('get-async-worker.js', a), { name: 'get-async-worker' });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    const o = r.result;
    assert.equal(o.probes, 303);
    assert.deepEqual(o.mismatches, []);
    assert.equal(o.sameTurn, 0, 'no read settled in the turn that started it');
    assert.equal(o.own, 'mine');
    assert.deepEqual(o.ownBytes, [0, 255]);
    assert.equal(o.ownDelete, undefined);
    assert.equal(o.deleted, undefined);
    assert.equal(o.asString, 'v4v4v4v4v4');
    assert.equal(o.badKey.code, 'invalid_argument');
    assert.equal(o.emptyKey.code, 'invalid_argument');
    assert.equal(o.badOption.code, 'invalid_argument');
    assert.equal(o.finished.code, 'closed');
    assert.ok(['ok', 'closed'].includes(o.inFlightAtClose), o.inFlightAtClose);
    assert.equal(o.afterClose.code, 'closed');
  });

test('client: getAsync gives what get gives and refuses by name', async () => {
  const r = await harness.page.evaluate(async () => {
    const { open, deleteDatabase } = window.skv;
    const { outcome } = window.outcome;
    await deleteDatabase('get-async-client');
    const db = await open('get-async-client');
    for (let i = 0; i < 50; i++) await db.set(`c${i}`, `value ${i}`);
    await db.delete('c7');
    const tx = db.begin();
    tx.set('c8', 'own');
    tx.delete('c9');
    const out = { diffs: [] };
    for (const k of ['c0', 'c7', 'c8', 'c9', 'c49', 'nope']) {
      const a = await tx.getAsync(k, { as: 'string' });
      const b = await tx.get(k, { as: 'string' });
      if (a !== b) out.diffs.push([k, a, b]);
    }
    out.own = await tx.getAsync('c8', { as: 'string' });
    out.badKey = await outcome(() => tx.getAsync({}));
    out.badOption = await outcome(() => tx.getAsync('c0', { bogus: 1 }));
    await tx.rollback();
    out.finished = await outcome(() => tx.getAsync('c0'));
    await db.close();
    await deleteDatabase('get-async-client');
    return out;
  });
  assert.deepEqual(r.diffs, []);
  assert.equal(r.own, 'own');
  assert.equal(r.badKey, 'invalid_argument');
  assert.equal(r.badOption, 'invalid_argument');
  assert.equal(r.finished, 'closed');
});
