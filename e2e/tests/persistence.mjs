// Persistence: data written in a worker survives a page reload (including a database the
// reload closed by ending its worker) and a browser restart on the same profile. The middle
// phase goes through the main-thread client (window.skv), so its path is covered too.
//
// OPFS belongs to the origin, port included, so the server stays up across the restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

const NAME = 'persist-main';
const HELD = 'persist-held';

async function runWorker(page, args) {
  const r = await page.evaluate((a) => window.runWorker('persistence-worker.js', a), args);
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  return r.result;
}

// Runs in the page: reads stage 1 through the client, writes stage 2, reads it back.
async function clientPhase({ name, heldName }) {
  const data = await import('/e2e/pages/persistence-data.js');
  const { open, listDatabases, SkvError } = window.skv;
  const fail = (m) => {
    throw new Error(m);
  };
  const enc = new TextEncoder();
  const db = await open(name, { createIfMissing: false });
  const stage1 = data.model(1);

  let d = data.diff(await db.scan(), stage1, 'client scan of stage 1');
  if (d) fail(d);
  if ((await db.count()) !== stage1.length) fail('client count');
  if ((await db.get(data.textKey(14), { as: 'string' })) !== 'v2-14') fail('client get p/14');
  if ((await db.get(data.textKey(20))) !== undefined) fail('deleted key is gone');

  // Async iteration both ways, over a sub-range and over everything, small batches.
  const r = db.begin('readonly');
  const lo = enc.encode(data.textKey(100));
  const hi = enc.encode(data.textKey(200));
  const inRange =
    stage1.filter(([k]) => data.compareBytes(k, lo) >= 0 && data.compareBytes(k, hi) < 0);
  const fwd = [];
  for await (const entry of r.range(data.textKey(100), data.textKey(200), { batchSize: 7 })) {
    fwd.push(entry);
  }
  d = data.diff(fwd, inRange, 'client range [p/100, p/200)');
  if (d) fail(d);
  const rev = [];
  for await (const entry of r.range(undefined, undefined, { reverse: true, batchSize: 500 })) {
    rev.push(entry);
  }
  d = data.diff(rev.reverse(), stage1, 'client reverse range');
  if (d) fail(d);
  // Leaving a loop early closes the iterator.
  let taken = 0;
  for await (const entry of r.range(data.textKey(0))) {
    if (++taken === 3) break;
  }
  await r.rollback();

  // Stage 2: multi-op transactions and the shortcuts, then a conflict through the client.
  const txs = data.stageOps(2);
  for (const ops of txs) {
    if (ops.length === 1) {
      const [kind, key, value] = ops[0];
      await (kind === 'set' ? db.set(key, value) : db.delete(key));
      continue;
    }
    const tx = db.begin();
    for (const [kind, key, value] of ops) {
      if (kind === 'set') tx.set(key, value);
      else tx.delete(key);
    }
    // Read-your-own-writes before the commit.
    if ((await tx.get(data.textKey(3499), { as: 'string' })) !== 'c-3499') fail('own write');
    await tx.commit();
  }
  const a = db.begin();
  const b = db.begin();
  a.set('client:race', 'a');
  b.set('client:race', 'b');
  await a.commit();
  let conflict = null;
  try {
    await b.commit();
  } catch (e) {
    conflict = e;
  }
  if (!(conflict instanceof SkvError) || conflict.code !== 'conflict') {
    fail(`conflict: ${conflict}`);
  }
  await db.delete('client:race');

  const stage2 = data.model(2);
  d = data.diff(await db.scan(), stage2, 'client scan of stage 2');
  if (d) fail(d);
  const limited = await db.scan(undefined, undefined, { reverse: true, limit: 5, offset: 2 });
  d = data.diff(limited, stage2.slice(-7, -2).reverse(), 'client scan with offset and limit');
  if (d) fail(d);
  const stats = await db.stats();
  await db.close();

  // The database the reload closed by ending its worker.
  const h = await open(heldName, { createIfMissing: false });
  if ((await h.count()) !== data.HELD_COUNT) fail('held count after reload');
  const held = await h.scan(undefined, undefined, { as: 'string' });
  for (let i = 0; i < data.HELD_COUNT; i++) {
    const [k, v] = held[i];
    if (k !== data.heldKey(i) || v !== data.heldValue(i)) fail(`held entry ${i}: ${k}=${v}`);
  }
  await h.close();
  return { keys: stage2.length, databases: await listDatabases(), commits: stats.commits };
}

test('data survives a page reload and a browser restart', async () => {
  const server = await startServer();
  const profile = newProfile();
  const url = `${server.origin}/e2e/pages/index.html`;
  let browser = null;
  try {
    browser = await launch(profile, url);
    await browser.page.waitForFunction(() => window.ready === true);
    const written = await runWorker(browser.page, { phase: 'write', name: NAME, heldName: HELD });
    console.log(`written: ${JSON.stringify(written)}`);

    // The reload ends the worker that still holds HELD open.
    await browser.page.reload();
    await browser.page.waitForFunction(() => window.ready === true);
    const client = await browser.page.evaluate(clientPhase, { name: NAME, heldName: HELD });
    console.log(`after reload, through the client: ${JSON.stringify(client)}`);
    assert.deepEqual(client.databases.filter((n) => n.startsWith('persist-')), [HELD, NAME]);

    await browser.context.close();
    browser = null;
    browser = await launch(profile, url);
    await browser.page.waitForFunction(() => window.ready === true);
    const verified = await runWorker(browser.page,
      { phase: 'verify', name: NAME, heldName: HELD, stage: 2 });
    console.log(`after restart: ${JSON.stringify(verified)}`);
    assert.equal(verified.keys, client.keys);
  } finally {
    if (browser) await browser.context.close();
    removeProfile(profile);
    await server.close();
  }
});
