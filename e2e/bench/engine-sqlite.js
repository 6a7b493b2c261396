// @sqlite.org/sqlite-wasm (pinned 3.54.1-build1) on its opfs-sahpool VFS: a table
// `kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID` (rows in key order, like the other engines'),
// one connection, prepared statements. Every call is synchronous, so the clients' concurrency
// has no effect: one client runs every operation back to back. A single-row operation is an
// autocommit statement (its own transaction); a batch is BEGIN ... COMMIT.
//
// Journal: by default WAL, which opfs-sahpool only allows with locking_mode=EXCLUSIVE (the
// connection then holds the database for itself, which is all a worker-owned database needs).
// --sqlite-journal delete gives the VFS's default rollback journal instead.
// --sync on: synchronous=FULL (WAL: the WAL is flushed at every commit; DELETE: journal and
// database are flushed at every commit); off: synchronous=OFF (no flush at all).

import sqlite3InitModule from '/node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs';

export async function openEngine(config) {
  const sqlite3 = await sqlite3InitModule({ print: () => {}, printErr: console.error });
  const pool = await sqlite3.installOpfsSAHPoolVfs({
    name: 'bench-sahpool', directory: '.bench-sahpool', clearOnInit: true, initialCapacity: 6,
  });
  const db = new pool.OpfsSAHPoolDb('/bench.sqlite');
  const journal = config.sqliteJournal || 'wal';
  const pragma = (sql) => db.selectValue(`PRAGMA ${sql}`);
  if (journal === 'wal') pragma('locking_mode=EXCLUSIVE');
  const mode = pragma(`journal_mode=${journal.toUpperCase()}`);
  if (String(mode).toLowerCase() !== journal) {
    throw new Error(`sqlite: journal_mode=${journal} gave ${mode}`);
  }
  db.exec(`PRAGMA synchronous=${config.sync ? 'FULL' : 'OFF'}`);
  // The same cache as skv's block cache (negative: KiB).
  db.exec(`PRAGMA cache_size=-${config.cacheMiB * 1024}`);
  db.exec('CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID');
  const settings = {
    journal_mode: pragma('journal_mode'), locking_mode: pragma('locking_mode'),
    synchronous: pragma('synchronous'), page_size: pragma('page_size'),
    cache_size: pragma('cache_size'), sqlite_version: sqlite3.version.libVersion,
  };

  const statements = [];
  const prep = (sql) => {
    const s = db.prepare(sql);
    statements.push(s);
    return s;
  };
  const insert = prep('INSERT INTO kv (k, v) VALUES (?, ?)');
  const update = prep('UPDATE kv SET v = ?2 WHERE k = ?1');
  const select = prep('SELECT v FROM kv WHERE k = ?');
  const del = prep('DELETE FROM kv WHERE k = ?');
  const count = prep('SELECT COUNT(*) FROM kv');
  const scanKeys = prep('SELECT k FROM kv ORDER BY k LIMIT ? OFFSET ?');
  const scanPairs = prep('SELECT k, v FROM kv ORDER BY k LIMIT ? OFFSET ?');
  const begin = prep('BEGIN');
  const commit = prep('COMMIT');

  const run = (s, ...args) => {
    try {
      if (args.length) s.bind(args);
      s.step();
    } finally {
      s.reset(true);
    }
  };
  const get = (k) => {
    try {
      select.bind([k]);
      return select.step() ? select.getBlob(0) !== null : false;
    } finally {
      select.reset(true);
    }
  };
  const inTx = (body) => {
    run(begin);
    try {
      const r = body();
      run(commit);
      return r;
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
  };

  return {
    name: 'sqlite-wasm',
    durability: `opfs-sahpool, journal_mode=${settings.journal_mode}` +
      `${journal === 'wal' ? ', locking_mode=EXCLUSIVE' : ''}, synchronous=` +
      `${config.sync ? 'FULL (flush at every commit)' : 'OFF (never flushes)'}`,
    settings,
    create: (k, v) => run(insert, k, v),
    update: (k, v) => run(update, k, v),
    remove: (k) => run(del, k),
    read: get,
    createBatch: (rows) => inTx(() => {
      for (const [k, v] of rows) run(insert, k, v);
    }),
    updateBatch: (rows) => inTx(() => {
      for (const [k, v] of rows) run(update, k, v);
    }),
    removeBatch: (keys) => inTx(() => {
      for (const k of keys) run(del, k);
    }),
    readBatch: (keys) => inTx(() => {
      let found = 0;
      for (const k of keys) if (get(k)) found++;
      return found;
    }),
    countAll: () => {
      try {
        count.step();
        return count.get(0);
      } finally {
        count.reset();
      }
    },
    scan: (skip, limit, withValues) => {
      const s = withValues ? scanPairs : scanKeys;
      let n = 0;
      try {
        s.bind([limit, skip]);
        while (s.step()) {
          s.get(0);
          if (withValues) s.getBlob(1);
          n++;
        }
      } finally {
        s.reset(true);
      }
      return n;
    },
    // The database file (page_count * page_size); the WAL file is not counted.
    bytes: () => pragma('page_count') * settings.page_size,
    stats: () => settings,
    close: async () => {
      for (const s of statements) s.finalize();
      db.close();
      await pool.removeVfs();
    },
  };
}
