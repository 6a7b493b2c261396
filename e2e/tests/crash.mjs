// A writer worker terminated mid-write, then reopened: every acknowledged Immediate commit is
// there, and what is there is a prefix of the commits in the order they were issued (one key
// per commit, numbered in issue order; the worker issues them in order and the WAL keeps that
// order, so a gap would mean a lost commit). Three rounds on the same database, with a small
// memtable so that the kill can also land in a flush or a compaction.
//
// What this can show: terminating a worker drops what is still in wasm memory (the slot pool's
// append buffers) but not what reached OPFS, which the OS keeps even unflushed. So it checks that
// an Immediate commit is acknowledged only after its WAL bytes were handed to OPFS and that
// recovery finds them. Whether flush() made them reach the disk needs fault injection below the
// handles instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../server.mjs';
import { launch, newProfile, removeProfile } from '../browser.mjs';

const NAME = 'crash';
const ROUNDS = [
  { round: 1, killAfter: 300, extraMs: 0 },
  { round: 2, killAfter: 600, extraMs: 7 },
  { round: 3, killAfter: 900, extraMs: 23 },
];

// In the page: starts the writer, terminates it once `killAfter` commits are acknowledged (and
// `extraMs` more have passed), returns the acknowledged commit numbers.
async function writeAndKill({ name, round, killAfter, extraMs }) {
  const worker = `writer-${round}`;
  let ended = null;
  const args = { name, round, perTurn: 8, maxInFlight: 24, memtableSize: 64 << 10 };
  window.startWorker(worker, 'crash-writer.js', args).then((r) => {
    ended = r;
  });
  const t0 = performance.now();
  await new Promise((resolve) => {
    const t = setInterval(() => {
      if (ended || window.progress[worker].length >= killAfter) {
        clearInterval(t);
        resolve();
      }
    }, 1);
  });
  if (!ended && extraMs) await new Promise((r) => setTimeout(r, extraMs));
  if (ended) return { error: ended.error || 'the writer stopped by itself' };
  window.killWorker(worker);
  const acked = window.progress[worker].slice();
  return { acked, ms: Math.round(performance.now() - t0) };
}

test('acknowledged Immediate commits survive a terminated worker', async () => {
  const server = await startServer();
  const profile = newProfile();
  const { context, page } = await launch(profile, `${server.origin}/e2e/pages/index.html`);
  try {
    await page.waitForFunction(() => window.ready === true);
    await page.evaluate((name) => window.skv.deleteDatabase(name), NAME);
    const history = [];
    for (const { round, killAfter, extraMs } of ROUNDS) {
      const w = await page.evaluate(writeAndKill, { name: NAME, round, killAfter, extraMs });
      assert.equal(w.error, undefined, JSON.stringify(w.error));
      assert.ok(w.acked.length >= killAfter);
      history.push({ round, acked: w.acked });
      const r = await page.evaluate((args) => window.runWorker('crash-check.js', args),
        { name: NAME, rounds: history });
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      const mine = r.result.rounds.at(-1);
      console.log(`round ${round}: killed after ${w.ms} ms with ${w.acked.length} acknowledged; ` +
        `${mine.visible} visible after reopening ` +
        `(${mine.unacknowledgedButPresent} not acknowledged), ` +
        `reopen ${r.result.openMs} ms, files per level ${JSON.stringify(r.result.filesPerLevel)}`);
      history.at(-1).visibleBefore = mine.visible;
    }
  } finally {
    await context.close();
    removeProfile(profile);
    await server.close();
  }
});
