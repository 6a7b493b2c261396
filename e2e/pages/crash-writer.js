// The writer of the crash test: Immediate commits in a loop, `perTurn` issued in each turn of
// the event loop (so they share a WAL write and a flush) with up to `maxInFlight` outstanding,
// one key per commit. Each commit's number is posted as { progress } once its promise resolves.
// It never finishes: the page terminates it. A failed commit ends it with the error.
import { open } from '/web/src/worker.js';
import { serve } from './harness.js';
import { key, value } from './crash-data.js';

serve(async ({ name, round, perTurn, maxInFlight, memtableSize }) => {
  const db = await open(name, { memtableSize });
  let next = 0;
  let inFlight = 0;
  let failed = null;
  for (;;) {
    if (failed) throw failed;
    for (let n = 0; n < perTurn && inFlight < maxInFlight; n++) {
      const s = next++;
      const tx = db.begin();
      tx.set(key(round, s), value(round, s));
      inFlight++;
      tx.commit({ durability: 'immediate' }).then(() => {
        inFlight--;
        self.postMessage({ progress: s });
      }, (e) => {
        failed = failed || e;
      });
    }
    await new Promise((r) => setTimeout(r, 0));
  }
});
