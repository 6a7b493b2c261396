// Checks runAll() against an in-memory engine: it runs the phases PHASE_IDS lists, in that
// order, every operation finds what the earlier phases left, and the profiling hooks bracket
// each phase (before, its operations, after).
//
//   node --test e2e/bench/workload.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAll, PHASE_IDS } from './workload.js';

function memoryEngine(log) {
  const rows = new Map();
  const put = (k, v) => {
    log.push('op');
    rows.set(k, v);
  };
  return {
    create: (k, v) => put(k, v),
    update: (k, v) => put(k, v),
    remove: (k) => {
      log.push('op');
      rows.delete(k);
    },
    read: (k) => {
      log.push('op');
      return rows.has(k);
    },
    createBatch: async (rs) => rs.forEach(([k, v]) => put(k, v)),
    updateBatch: async (rs) => rs.forEach(([k, v]) => put(k, v)),
    removeBatch: async (ks) => ks.forEach((k) => rows.delete(k)),
    readBatch: (ks) => ks.filter((k) => rows.has(k)).length,
    countAll: () => rows.size,
    scan: (skip, limit) => Math.max(0, Math.min(limit, rows.size - skip)),
  };
}

test('runAll runs PHASE_IDS in order, with hooks around each phase', async () => {
  const log = [];
  const config = { n: 6000, clients: 3, batchRows: 2000, scanRepeats: 2, countRepeats: 1 };
  const reported = [];
  const hooks = {
    before: async (id) => log.push(`before ${id}`),
    after: async (id) => log.push(`after ${id}`),
  };
  const phases = await runAll(memoryEngine(log), config, (r) => reported.push(r.id), null, hooks);
  assert.deepEqual(phases.map((p) => p.id), PHASE_IDS);
  assert.deepEqual(reported, PHASE_IDS);
  for (const p of phases) assert.equal(p.misses, 0, `${p.id} missed ${p.misses}`);
  // Each phase's operations lie between its two hooks.
  const marks = log.filter((l) => l !== 'op');
  assert.deepEqual(marks, PHASE_IDS.flatMap((id) => [`before ${id}`, `after ${id}`]));
  const first = log.indexOf('before create');
  const end = log.indexOf('after create');
  assert.equal(log.slice(first + 1, end).length, config.n);
  assert.ok(log.slice(first + 1, end).every((l) => l === 'op'));
});
