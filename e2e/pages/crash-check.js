// The checker of the crash test. For every round so far: the keys of the round must be exactly
// commits 0 .. visible-1 (a prefix in commit order) with their values; every acknowledged commit
// must be among them; earlier rounds must be as the previous check found them.
import { open } from '/web/src/worker.js';
import { serve, check } from './harness.js';
import { key, value, roundStart, roundEnd } from './crash-data.js';

serve(async ({ name, rounds }) => {
  const t0 = performance.now();
  const db = await open(name, { createIfMissing: false });
  const openMs = Math.round(performance.now() - t0);
  const out = [];
  for (const { round, acked, visibleBefore } of rounds) {
    const entries = db.scan(roundStart(round), roundEnd(round), { as: 'string' });
    entries.forEach(([k, v], s) => {
      check(k === key(round, s), `round ${round}: entry ${s} is ${k}: not a prefix of the commits`);
      check(v === value(round, s), `round ${round}: ${k} has a wrong value ${v.slice(0, 40)}`);
    });
    const visible = entries.length;
    const missing = acked.filter((s) => s >= visible);
    check(missing.length === 0,
      `round ${round}: ${missing.length} acknowledged commits are missing (first ${missing[0]}, ` +
      `${visible} visible, ${acked.length} acknowledged)`);
    if (visibleBefore !== undefined) {
      check(visible === visibleBefore,
        `round ${round}: ${visible} keys now, ${visibleBefore} before`);
    }
    check(db.count(roundStart(round), roundEnd(round)) === visible, `round ${round}: count`);
    const unacknowledgedButPresent = visible - acked.length;
    out.push({ round, acked: acked.length, visible, unacknowledgedButPresent });
  }
  const stats = db.stats();
  await db.close();
  return { openMs, rounds: out, filesPerLevel: stats.filesPerLevel, pool: stats.pool };
});
