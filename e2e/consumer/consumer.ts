// Compiled with tsc --noEmit --strict against the unpacked tarball: the package's declarations
// must describe both entry points well enough for strict TypeScript code.
import { open, SkvError, type Stats } from 'skv';
import * as worker from 'skv/worker';

export async function client(): Promise<string | undefined> {
  const db = await open('typed', { durability: 'immediate', maxSlots: 64 });
  const tx = db.begin();
  await tx.set('k', new Uint8Array([1, 2, 3]));
  await tx.commit({ durability: 'eventual' });
  for await (const [k, v] of db.begin('readonly').range('a', 'z', { reverse: true })) {
    void k;
    void v;
  }
  const stats: Stats = await db.stats();
  void stats.pool.free;
  try {
    await db.set('', 'x');
  } catch (e) {
    if (e instanceof SkvError && e.code === 'invalid_argument') return undefined;
  }
  const value: string | undefined = await db.get('k', { as: 'string' });
  await db.close();
  return value;
}

export async function inWorker(): Promise<number> {
  const db = await worker.open('typed');
  const tx = db.begin();
  tx.set('k', 'v');
  await tx.commit();
  const bytes: Uint8Array | undefined = db.get('k');
  void bytes;
  let n = 0;
  for (const entry of db.begin('readonly').range()) {
    void entry;
    n++;
  }
  const files: worker.ExportedFile[] = db.exportFiles();
  void files;
  await db.close();
  return n + db.count();
}
