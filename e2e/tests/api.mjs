// The worker API's commit grouping, and the main-thread client end to end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const browser = usePage();

test('commits of one turn share one WAL write and one flush', async () => {
  const r = await browser.page.evaluate(() => window.runWorker('group.js', { name: 'group' }));
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  const { immediate, eventual, sequential } = r.result;
  assert.deepEqual({ commits: immediate.commits, groups: immediate.groups, syncs: immediate.syncs },
    { commits: 64, groups: 1, syncs: 1 });
  assert.deepEqual({ commits: eventual.commits, groups: eventual.groups, syncs: eventual.syncs },
    { commits: 64, groups: 1, syncs: 0 });
  assert.equal(sequential.groups, 8);
  assert.equal(sequential.syncs, 8);
});

test('main-thread client: transactions, reads, scans, iteration, errors, grouping', async () => {
  const r = await browser.page.evaluate(async () => {
    const { open, deleteDatabase, listDatabases, SkvError } = window.skv;
    await deleteDatabase('client');
    const db = await open('client');
    const enc = new TextEncoder();
    const tx = db.begin();
    for (let i = 0; i < 500; i++) tx.set(`k${String(i).padStart(4, '0')}`, enc.encode(`v${i}`));
    tx.delete('k0007');
    const own = await tx.get('k0003', { as: 'string' });
    await tx.commit();
    const out = { own };
    out.get = await db.get('k0499', { as: 'string' });
    out.deleted = await db.get('k0007');
    out.count = await db.count();
    out.scan = (await db.scan('k0100', undefined, { limit: 3, as: 'string' }));
    out.reverse = (await db.scan(undefined, undefined, { reverse: true, limit: 2, keysOnly: true, as: 'string' }));
    out.skip = (await db.scan(undefined, undefined, { offset: 490, keysOnly: true, as: 'string' })).length;
    let n = 0;
    let last = '';
    let ordered = true;
    for await (const [k] of db.begin('readonly').range('k0400', 'k0450', { as: 'string', batchSize: 7 })) {
      if (k <= last) ordered = false;
      last = k;
      n++;
    }
    out.iterated = n;
    out.ordered = ordered;
    // Conflicts and the Error subclass survive the trip from the worker.
    const a = db.begin();
    const b = db.begin();
    await a.get('k0001');
    await b.get('k0001');
    a.set('k0001', 'A');
    b.set('k0001', 'B');
    await a.commit();
    try {
      await b.commit();
      out.conflict = 'none';
    } catch (e) {
      out.conflict = e instanceof SkvError ? e.code : `not SkvError: ${e}`;
    }
    try {
      await db.set('', 'empty key');
    } catch (e) {
      out.emptyKey = e.code;
    }
    // Commits made in one turn of the page travel together and share one WAL write.
    const s0 = await db.stats();
    const commits = [];
    for (let i = 0; i < 32; i++) commits.push(db.set(`g${i}`, 'x'));
    await Promise.all(commits);
    const s1 = await db.stats();
    out.groups = s1.commitGroups - s0.commitGroups;
    out.commits = s1.commits - s0.commits;
    out.list = await listDatabases();
    await db.close();
    try {
      await db.get('k0001');
    } catch (e) {
      out.afterClose = e.code;
    }
    return out;
  });
  assert.equal(r.own, 'v3');
  assert.equal(r.get, 'v499');
  assert.equal(r.deleted, undefined);
  assert.equal(r.count, 499);
  assert.deepEqual(r.scan, [['k0100', 'v100'], ['k0101', 'v101'], ['k0102', 'v102']]);
  assert.deepEqual(r.reverse, ['k0499', 'k0498']);
  assert.equal(r.skip, 9);
  assert.equal(r.iterated, 50);
  assert.equal(r.ordered, true);
  assert.equal(r.conflict, 'conflict');
  assert.equal(r.emptyKey, 'invalid_argument');
  assert.equal(r.commits, 32);
  assert.equal(r.groups, 1);
  assert.ok(r.list.includes('client'), JSON.stringify(r.list));
  assert.equal(r.afterClose, 'closed');
});

test('compressionStartLevel decides whether compact() leaves L1 compressed', async () => {
  const r = await browser.page.evaluate(async () => {
    const { open, deleteDatabase } = window.skv;
    // 1,000 values of 2,000 bytes that compress about 20 to 1, kept in the tables.
    const value = (i) => {
      const chars = [];
      for (let j = 0; j < 2000; j++) chars.push(j % 50 === 0 ? String(j / 50 % 10) : String.fromCharCode(97 + i % 26));
      return chars.join('');
    };
    const out = {};
    for (const [what, options] of [['default', {}], ['from L1', { compressionStartLevel: 1 }]]) {
      const name = `compression-start-${what.replace(' ', '-')}`;
      await deleteDatabase(name);
      const db = await open(name, { valueLog: false, ...options });
      const tx = db.begin();
      for (let i = 0; i < 1000; i++) tx.set(`k${String(i).padStart(4, '0')}`, value(i));
      await tx.commit();
      await db.compact();
      const s = await db.stats();
      out[what] = { l0: s.bytesPerLevel[0], l1: s.bytesPerLevel[1], last: await db.get('k0999', { as: 'string' }) === value(999) };
      await db.close();
      await deleteDatabase(name);
    }
    return out;
  });
  console.log(JSON.stringify(r));
  for (const what of ['default', 'from L1']) {
    assert.equal(r[what].l0, 0, `${what}: compact() empties L0`);
    assert.ok(r[what].last, `${what}: the last value reads back`);
  }
  assert.ok(r.default.l1 > 2_000_000, `default: L1 raw, ${r.default.l1} bytes`);
  assert.ok(r['from L1'].l1 < 400_000, `from L1: L1 compressed, ${r['from L1'].l1} bytes`);
});
