// Compiled with tsc --noEmit --strict against the unpacked tarball: the package's declarations
// must describe both entry points well enough for strict TypeScript code, and range() and scan()
// must be typed by their options (a wrong expectation below fails the compile).
import { open, SkvError, type Entry, type KeyVersion, type Stats, type Versioning } from 'skv';
import * as worker from 'skv/worker';

// True only when A and B are the same type.
type Equals<A, B> =
  (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function expectType<T extends true>(): void {}

export async function client(): Promise<string | undefined> {
  const db = await open('typed', { durability: 'immediate', maxSlots: 64 });
  const tx = db.begin();
  void tx.set('k', new Uint8Array([1, 2, 3]));
  await tx.commit({ durability: 'eventual' });
  for await (const [k, v] of db.range('a', 'z', { reverse: true })) {
    expectType<Equals<typeof k, Uint8Array>>();
    expectType<Equals<typeof v, Uint8Array>>();
  }
  for await (const key of db.range('a', 'z', { keysOnly: true, as: 'string' })) {
    expectType<Equals<typeof key, string>>();
  }
  const pairs = await db.scan(undefined, undefined, { as: 'string', limit: 10 });
  expectType<Equals<typeof pairs, Array<Entry<string>>>>();
  const keys = await db.begin('readonly').scan('a', 'b', { keysOnly: true });
  expectType<Equals<typeof keys, Uint8Array[]>>();
  const text = await db.get('k', { as: 'string' });
  expectType<Equals<typeof text, string | undefined>>();
  const total: number = await db.transaction(async (t) => {
    t.set('n', '1');
    return 1;
  }, { retries: 2 });
  void total;
  const stats: Stats = await db.stats();
  void stats.pool.fileBytes;
  void stats.openTransactions;
  try {
    await db.set('', 'x');
  } catch (e) {
    if (e instanceof SkvError && e.code === 'invalid_argument') return undefined;
  }
  const value: string | undefined = await db.get('k', { as: 'string' });
  await db.close();
  return value;
}

// Versioned queries: timestamps in are BigInts (or safe-integer Numbers), out always BigInts.
export async function versioned(): Promise<bigint> {
  const db = await open('typed-versions', { versioning: { retentionNs: 0n } });
  const stored: Versioning = await db.versioning();
  expectType<Equals<typeof stored.retentionNs, bigint>>();
  await db.setAt('k', 'v', 1_700_000_000_000_000_000n);
  const tx = db.begin();
  void tx.setAt('k', new Uint8Array([1]), 5);
  await tx.commit();
  const old = await db.getAt('k', 1_700_000_000_000_000_000n, { as: 'string' });
  expectType<Equals<typeof old, string | undefined>>();
  const versions = await db.history('k', { as: 'string', includeTombstones: true, limit: 10 });
  expectType<Equals<typeof versions, Array<KeyVersion<string>>>>();
  let newest = 0n;
  for (const v of versions) {
    if (!v.tombstone) {
      expectType<Equals<typeof v.value, string>>();
    }
    if (v.timestamp > newest) newest = v.timestamp;
  }
  for await (const [k, v] of db.rangeAt('a', 'z', newest, { reverse: true, as: 'string' })) {
    expectType<Equals<typeof k, string>>();
    void v;
  }
  const keys = await db.begin('readonly').scanAt(undefined, undefined, 0n, { keysOnly: true });
  expectType<Equals<typeof keys, Uint8Array[]>>();
  await db.close();
  const w = await worker.open('typed-versions', { versioning: { enabled: true } });
  const h = w.history('k');
  expectType<Equals<typeof h, Array<KeyVersion<Uint8Array>>>>();
  const at: Uint8Array | undefined = w.begin('readonly').getAt('k', newest);
  void at;
  for (const key of w.rangeAt(undefined, undefined, newest, { keysOnly: true })) {
    expectType<Equals<typeof key, Uint8Array>>();
  }
  const wv: Versioning = w.versioning();
  await w.close();
  return wv.retentionNs + newest;
}

export async function inWorker(): Promise<number> {
  const db = await worker.open('typed');
  const tx = db.begin();
  tx.set('k', 'v');
  await tx.commit();
  const bytes: Uint8Array | undefined = db.get('k');
  void bytes;
  let n = 0;
  for (const entry of db.range()) {
    expectType<Equals<typeof entry, Entry<Uint8Array>>>();
    n++;
  }
  for (const key of db.begin('readonly').range(undefined, undefined, { keysOnly: true })) {
    expectType<Equals<typeof key, Uint8Array>>();
  }
  const some = db.scan('a', 'z', { as: 'string' });
  expectType<Equals<typeof some, Array<Entry<string>>>>();
  const r = await db.transaction((t) => t.get('k', { as: 'string' }));
  expectType<Equals<typeof r, string | undefined>>();
  const files: worker.ExportedFile[] = db.exportFiles();
  void files;
  await db.close();
  return n + db.count();
}
