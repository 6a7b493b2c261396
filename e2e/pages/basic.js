// Worker API basics: open, write, read, scan both ways, count, commit, rollback, errors.
import { open, deleteDatabase, SkvError } from '/web/src/worker.js';
import { serve, check, text } from './harness.js';

serve(async ({ name }) => {
  await deleteDatabase(name);
  const db = await open(name);
  const tx = db.begin();
  for (let i = 0; i < 100; i++) tx.set(`k${String(i).padStart(3, '0')}`, `v${i}`);
  check(tx.get('k005', { as: 'string' }) === 'v5', 'read your own write');
  await tx.commit();
  check(db.get('k042', { as: 'string' }) === 'v42', 'committed value');
  check(db.get('nope') === undefined, 'missing key');
  check(db.count() === 100, 'count');
  const fwd = db.scan('k010', 'k015', { as: 'string' });
  check(JSON.stringify(fwd.map(([k]) => k)) === '["k010","k011","k012","k013","k014"]', 'scan');
  const rev = db.scan(undefined, undefined, { reverse: true, limit: 3, as: 'string' });
  check(rev.map(([k]) => k).join() === 'k099,k098,k097', 'reverse scan');
  const r = db.begin('readonly');
  let n = 0;
  for await (const [k, v] of r.range('k090')) {
    check(text(v) === `v${Number(text(k).slice(1))}`, 'value of iterated key');
    n++;
  }
  check(n === 10, 'async iteration count');
  let err;
  try { r.set('a', 'b'); } catch (e) { err = e; }
  check(err instanceof SkvError && err.code === 'read_only', `read_only error, got ${err && err.code}`);
  r.rollback();
  const a = db.begin();
  const b = db.begin();
  a.set('k001', 'A');
  b.set('k001', 'B');
  await a.commit();
  let conflict;
  try { await b.commit(); } catch (e) { conflict = e; }
  check(conflict && conflict.code === 'conflict', `conflict, got ${conflict && conflict.code}`);
  const stats = db.stats();
  await db.close();
  return { stats };
});
