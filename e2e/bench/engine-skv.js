// skv on OPFS through its worker API (web/src/worker.js), as a site would call it. Writes are
// read-write transactions whose commit() promise is awaited: commits issued in one turn of the
// event loop share one WAL write and, when durable, one OPFS flush (group commit), so
// concurrent clients matter here. Reads, counts and scans are synchronous calls into the wasm
// core, each in a read-only transaction of its own.

import { open, deleteDatabase } from '/web/src/worker.js';

const NAME = 'skv-bench';

export function openEngine(config) {
  return openSkv(config, 'skv', {});
}

// Opens skv as engine `name` with `extra` open options (engine-skv-xchacha.js adds a key).
export async function openSkv(config, name, extra) {
  await deleteDatabase(NAME).catch(() => {});
  const durability = config.sync ? 'immediate' : 'eventual';
  const db = await open(NAME, {
    durability, blockCacheSize: config.cacheMiB * 1024 * 1024, ...extra,
  });
  const commitOptions = { durability };

  // A commit that loses a conflict is retried, as the native harness does (none is expected:
  // no two operations touch one key).
  const write = async (body) => {
    for (;;) {
      const tx = db.begin();
      body(tx);
      try {
        await tx.commit(commitOptions);
        return;
      } catch (e) {
        if (e.code !== 'conflict') throw e;
      }
    }
  };
  const readonly = (body) => {
    const tx = db.begin('readonly');
    try {
      return body(tx);
    } finally {
      tx.rollback();
    }
  };

  return {
    name,
    durability: config.sync
      ? "durability 'immediate': the commit settles after the OPFS flush() its group shares"
      : "durability 'eventual': written to the WAL (one OPFS write per group), no flush()",
    create: (k, v) => write((tx) => tx.set(k, v)),
    update: (k, v) => write((tx) => tx.set(k, v)),
    remove: (k) => write((tx) => tx.delete(k)),
    read: (k) => readonly((tx) => tx.get(k) !== undefined),
    createBatch: (rows) => write((tx) => {
      for (const [k, v] of rows) tx.set(k, v);
    }),
    updateBatch: (rows) => write((tx) => {
      for (const [k, v] of rows) tx.set(k, v);
    }),
    removeBatch: (keys) => write((tx) => {
      for (const k of keys) tx.delete(k);
    }),
    readBatch: (keys) => readonly((tx) => {
      let found = 0;
      for (const k of keys) if (tx.get(k) !== undefined) found++;
      return found;
    }),
    countAll: () => readonly((tx) => tx.count()),
    scan: (skip, limit, withValues) => readonly((tx) =>
      tx.scan(undefined, undefined, { offset: skip, limit, keysOnly: !withValues }).length),
    // The bytes of the database's slot files (stats().pool.fileBytes): the benchmark uses it
    // because navigator.storage.estimate() overstates OPFS files written through sync access
    // handles by a factor of 2-3 here (it does not see truncations promptly).
    bytes: () => db.stats().pool.fileBytes,
    // Waits (yielding, so the worker's pump runs the work) until no flush or compaction is
    // queued and no memtable is frozen; returns the milliseconds waited. Fails after 300 s.
    settle: async () => {
      const t0 = performance.now();
      for (;;) {
        const s = db.stats();
        if (s.backgroundJobs === 0 && s.immutableMemtables === 0) return performance.now() - t0;
        if (performance.now() - t0 > 300000) {
          throw new Error(`background work not done after 300 s: ${s.backgroundJobs} jobs, ` +
            `${s.immutableMemtables} frozen memtables`);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    stats: () => {
      const s = db.stats();
      return {
        commits: s.commits, commitGroups: s.commitGroups, walSyncs: s.walSyncs,
        flushes: s.flushes, compactions: s.compactions, stalls: s.stalls,
        filesPerLevel: s.filesPerLevel, steps: s.steps, longestStepMs: s.longestStepMs,
        handleWrites: s.pool.handleWrites, handleFlushes: s.pool.handleFlushes,
        handleReads: s.pool.handleReads, slots: s.pool.slots,
      };
    },
    close: async () => {
      await db.close();
      await deleteDatabase(NAME).catch(() => {});
    },
  };
}
