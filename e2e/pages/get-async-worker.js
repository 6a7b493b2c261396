// The worker half of e2e/tests/get-async.mjs: Transaction.getAsync() through the worker API,
// compared with get() over present, absent, deleted and own uncommitted keys, and its refusals.
import { open, deleteDatabase, SkvError } from '/web/src/worker.js';
import { serve } from './harness.js';

const str = (b) => (b === undefined ? undefined : new TextDecoder().decode(b));

/** The outcome of a promise as { code } ('ok' when it resolved), and whether it threw instead. */
async function outcome(fn) {
  let p;
  try {
    p = fn();
  } catch (e) {
    return { code: 'threw', message: String(e.message) };
  }
  try {
    await p;
    return { code: 'ok' };
  } catch (e) {
    return { code: e instanceof SkvError ? e.code : `${e.name}: ${e.message}` };
  }
}

serve(async ({ name }) => {
  await deleteDatabase(name);
  const db = await open(name, { memtableSize: 32 << 10 });
  const keys = [];
  for (let i = 0; i < 300; i++) {
    const k = `k${String(i).padStart(4, '0')}`;
    keys.push(k);
    await db.set(k, `v${i}`.repeat(1 + (i % 7)));
    if (i === 150) await db.flush();  // half in a table, half in the memtable
  }
  for (let i = 0; i < 300; i += 3) await db.delete(keys[i]);
  const tx = db.begin();
  tx.set('k0001', 'mine');                   // own write over a committed key
  tx.set('only-mine', new Uint8Array([0, 255]));
  tx.delete('k0002');                        // own delete
  const probes = [...keys, 'absent', 'only-mine', 'zzz'];
  const mismatches = [];
  let sameTurn = 0;
  let settled = 0;
  const all = probes.map((k) => {
    const p = tx.getAsync(k).then((v) => { settled++; return v; });
    return [k, p];
  });
  sameTurn = settled;  // nothing settles before this turn ends
  for (const [k, p] of all) {
    const got = await p;
    const want = tx.get(k);
    if (String(got) !== String(want) || (got === undefined) !== (want === undefined)) {
      mismatches.push({ k, got: String(got), want: String(want) });
    }
  }
  const asString = await tx.getAsync('k0004', { as: 'string' });
  const out = {
    probes: probes.length,
    mismatches,
    sameTurn,
    own: str(await tx.getAsync('k0001')),
    ownBytes: Array.from(await tx.getAsync('only-mine')),
    ownDelete: await tx.getAsync('k0002'),
    deleted: await tx.getAsync('k0003'),
    asString,
    badKey: await outcome(() => tx.getAsync(42)),
    emptyKey: await outcome(() => tx.getAsync('')),
    badOption: await outcome(() => tx.getAsync('k0004', { as: 'json' })),
  };
  tx.rollback();
  out.finished = await outcome(() => tx.getAsync('k0004'));
  // A read in flight when the database closes settles (with its value or closed), never hangs.
  const t2 = db.begin('readonly');
  const inFlight = t2.getAsync('k0005').then(() => 'ok', (e) => e.code);
  await db.close();
  out.inFlightAtClose = await inFlight;
  out.afterClose = await outcome(() => t2.getAsync('k0005'));
  await deleteDatabase(name);
  return out;
});
