// Running out of room gives a clear error, and a database has one owner.
//  - Pool exhaustion: a pool capped at 8 slots with a small memtable runs dry after a few
//    flushes; the commit that finds it dry fails with SkvError 'quota' naming the slot pool, and
//    every batch acknowledged before stays readable after reopening with a larger cap.
//  - One owner: while a worker holds a database, another worker (or another tab, through the
//    main-thread client) gets 'busy'; with waitForLock it waits and opens once the holder closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

async function runWorker(page, script, args) {
  const r = await page.evaluate(([s, a]) => window.runWorker(s, a), [script, args]);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

test('quota and ownership errors', async (t) => {
  const server = await startServer();
  const profile = newProfile();
  const url = `${server.origin}/e2e/pages/index.html`;
  const { context, page } = await launch(profile, url);
  try {
    await page.waitForFunction(() => window.ready === true);

    await t.test('slot pool exhaustion', async () => {
      const name = 'quota-pool';
      const w = await runWorker(page, 'quota-worker.js',
        { phase: 'exhaust', name, maxSlots: 8, memtableSize: 32 << 10, maxCommits: 2000 });
      console.log(`exhausted: ${JSON.stringify(w)}`);
      assert.ok(w.failure, 'a commit failed');
      assert.equal(w.failure.isSkvError, true);
      assert.equal(w.failure.code, 'quota');
      assert.match(w.failure.message, /slot pool exhausted/);
      assert.ok(w.acked > 0, 'some commits were acknowledged first');
      assert.equal(w.again && w.again.code, 'quota', 'the failure is sticky');
      assert.equal(w.closeError, null, 'close() after the failure');
      assert.ok(w.pool.slots <= 8, `the cap held: ${w.pool.slots} slots`);

      const r = await runWorker(page, 'quota-worker.js',
        { phase: 'reopen', name, maxSlots: 64, acked: w.acked });
      console.log(`reopened with maxSlots 64: ${JSON.stringify(r)}`);
      assert.ok(r.pool.slots > 8);
    });

    await t.test('one owner per database', async () => {
      const name = 'quota-lock';
      await page.evaluate((n) => {
        window.holderDone =
          window.startWorker('holder', 'quota-lock-holder.js', { cmd: 'open', name: n });
      }, name);
      await page.waitForFunction(() => window.progress.holder.includes('opened'));

      const busy = await runWorker(page, 'quota-lock-contender.js',
        { name, waitForLock: false, tryDelete: true });
      assert.equal(busy.opened, false);
      assert.equal(busy.error.isSkvError, true);
      assert.equal(busy.error.code, 'busy', JSON.stringify(busy.error));
      assert.equal(busy.deleteError && busy.deleteError.code, 'busy', 'deleteDatabase while open');

      // Another tab, through the main-thread client.
      const tab = await context.newPage();
      await tab.goto(url);
      await tab.waitForFunction(() => window.ready === true);
      const other = await tab.evaluate(async (n) => {
        try {
          const db = await window.skv.open(n);
          await db.close();
          return { opened: true };
        } catch (e) {
          const isSkvError = e instanceof window.skv.SkvError;
          return { opened: false, isSkvError, code: e.code, message: e.message };
        }
      }, name);
      assert.equal(other.opened, false);
      assert.equal(other.isSkvError, true);
      assert.equal(other.code, 'busy', JSON.stringify(other));

      // A waiter in the other tab, started before the holder closes.
      await tab.evaluate((n) => {
        window.waiter =
          window.startWorker('waiter', 'quota-lock-contender.js', { name: n, waitForLock: true });
        window.waiter.then((r) => {
          window.waiterResult = r;
        });
      }, name);
      await tab.waitForFunction(() => window.progress.waiter.includes('opening'));
      await page.waitForTimeout(400);
      assert.equal(await tab.evaluate(() => window.waiterResult), undefined, 'the waiter waits');

      const closed = await page.evaluate(() => {
        window.workers.get('holder').postMessage({ cmd: 'close' });
        return window.holderDone;
      });
      assert.equal(closed.error, undefined, JSON.stringify(closed.error));
      assert.equal(closed.result.sameWorker, 'busy', 'a second open in the same worker');
      const waited = await tab.evaluate(() => window.waiter);
      assert.equal(waited.error, undefined, JSON.stringify(waited.error));
      assert.equal(waited.result.opened, true, JSON.stringify(waited.result));
      assert.equal(waited.result.owner, 'holder');
      assert.ok(waited.result.waitedMs >= 350, `waited ${waited.result.waitedMs} ms`);
      console.log(`the waiter opened after ${waited.result.waitedMs} ms`);
      await tab.close();
    });
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
});
