// The data of the versioning tests, shared by their worker (versioning-worker.js) and the page
// code that runs through the main-thread client: the writes of a versioned database (commits at
// the time now, set_at in the past, deletes, tables and WAL), and the questions asked of it. The
// answers are plain strings and arrays, so the two APIs, a page reload and the native skv tool
// can be compared with deepEqual. Timestamps travel as decimal strings (postMessage and
// page.evaluate results keep them exact that way).

export const T_PAST = 1_600_000_000_000_000_000n;
export const MAX_TIMESTAMP = 0x7fffffffffffffffn;
export const BIN_KEY = new Uint8Array([0x00, 0xff, 0x5c]);
const filler = (i) => `f/${String(i).padStart(4, '0')}`;

// The keys whose histories are asked for (BIN_KEY as 'bin').
export const KEYS = ['doc', 'note', 'gone', 'wal', 'early', 'f/0000', 'f/0150', 'missing', 'bin'];
const keyBytes = (k) => (k === 'bin' ? BIN_KEY : k);

// A key or value as the native tool prints it: a backslash as \\, any byte outside printable
// ASCII as \xNN (tools/skv/escape.cpp).
export function escape(b) {
  let out = '';
  for (const c of b) {
    if (c === 0x5c) out += '\\\\';
    else if (c >= 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/**
 * Writes the database through either API (`db` from open() of 'skv' or 'skv/worker': every
 * call is awaited, which a synchronous result does not mind). Returns nothing; the answers are
 * read afterwards.
 */
export async function write(db) {
  await db.set('doc', 'v1');
  await db.set('note', 'n1');
  await db.set('gone', 'g1');
  await db.setAt('doc', 'doc from the past', T_PAST);
  await db.setAt('early', 'e1', T_PAST - 5n);
  const tx = db.begin();
  tx.set('doc', 'v2');
  tx.setAt('note', 'n-before', T_PAST + 1n);
  await tx.commit();
  for (let round = 0; round < 2; round++) {
    const f = db.begin();
    for (let i = 0; i < 300; i++) {
      if (round === 0) f.setAt(filler(i), `old ${i}`, T_PAST + BigInt(i));
      else f.set(filler(i), `new ${i} ${'x'.repeat(i % 40)}`);
    }
    await f.commit();
  }
  await db.setAt(BIN_KEY, new Uint8Array([0x00, 0x0a, 0x5c, 0xff]), T_PAST + 7n);
  await db.flush();
  await db.delete('gone');
  await db.set('doc', 'v3');
  await db.set(BIN_KEY, new Uint8Array([0xfe]));
  await db.delete('early');
  await db.flush();
  await db.compact();
  // Only in the WAL from here on.
  await db.set('doc', 'v4');
  await db.setAt('wal', 'w-past', T_PAST - 1n);
  await db.set('wal', 'w-now');
  await db.delete('f/0150');
  await db.setAt('gone', 'g-past', T_PAST + 2n);
}

/**
 * The timestamps the questions are asked at: 0, the largest, and each version's timestamp of
 * KEYS, one before it and one after it. Decimal strings, sorted.
 */
export async function questionTimes(db) {
  const set = new Set([0n, MAX_TIMESTAMP, T_PAST]);
  for (const k of KEYS) {
    for (const v of await db.history(keyBytes(k), { includeTombstones: true })) {
      for (const t of [v.timestamp - 1n, v.timestamp, v.timestamp + 1n]) {
        if (t >= 0n && t <= MAX_TIMESTAMP) set.add(t);
      }
    }
  }
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
}

const line = ([k, v]) => `${escape(k)}\t${escape(v)}`;

async function collect(iter) {
  const out = [];
  for await (const entry of iter) out.push(entry);
  return out;
}

/**
 * Every answer, from either API, as the native tool would print it: history lines
 * ('<ts>\t<value>', '<ts> deleted'), getAt values (null for none), rangeAt both ways (through
 * the database and through a transaction, small batches), scanAt, keysOnly, and the stored
 * versioning.
 */
export async function answers(db, times) {
  const out = { versioning: null, history: {}, tombstones: {}, limited: {}, getAt: {}, at: {} };
  const v = await db.versioning();
  out.versioning = { enabled: v.enabled, retentionNs: String(v.retentionNs) };
  const historyLines = (versions) => versions.map((x) =>
    (x.tombstone ? `${x.timestamp} deleted` : `${x.timestamp}\t${escape(x.value)}`));
  for (const k of KEYS) {
    out.history[k] = historyLines(await db.history(keyBytes(k)));
    out.tombstones[k] = historyLines(await db.history(keyBytes(k), { includeTombstones: true }));
    out.limited[k] = historyLines(await db.history(keyBytes(k), { limit: 2 }));
  }
  const tx = db.begin('readonly');
  try {
    for (const t of times) {
      const ts = BigInt(t);
      const got = {};
      for (const k of KEYS) {
        const value = await db.getAt(keyBytes(k), ts);
        got[k] = value === undefined ? null : escape(value);
      }
      out.getAt[t] = got;
      const forward = (await collect(db.rangeAt(undefined, undefined, ts, { batchSize: 7 })))
        .map(line);
      const backward = (await collect(tx.rangeAt(undefined, undefined, ts,
        { reverse: true, batchSize: 64 }))).map(line);
      const keys = (await collect(tx.rangeAt('doc', 'f/0100', ts, { keysOnly: true })))
        .map((k) => escape(k));
      const scanned = (await db.scanAt('f/', 'f0', ts, { offset: 10, limit: 5, reverse: true }))
        .map(line);
      out.at[t] = { forward, backward, keys, scanned };
    }
  } finally {
    await tx.rollback();
  }
  return out;
}

/** A few facts the answers must show whatever the commit times were. */
export function checkFacts(a, check) {
  check(a.versioning.enabled === true && a.versioning.retentionNs === '0',
    `versioning ${JSON.stringify(a.versioning)}`);
  check(a.history.doc.length === 5, `doc has 5 versions: ${a.history.doc}`);
  check(a.history.doc[0].endsWith('\tv4'), `doc newest is v4: ${a.history.doc}`);
  check(a.history.doc[4] === `${T_PAST}\tdoc from the past`, `doc oldest: ${a.history.doc}`);
  check(a.tombstones.gone.length === 3 && a.tombstones.gone[0].endsWith(' deleted') &&
    a.tombstones.gone[2] === `${T_PAST + 2n}\tg-past`, `gone: ${a.tombstones.gone}`);
  check(a.history.gone.length === 2, `gone without tombstones: ${a.history.gone}`);
  check(a.history.missing.length === 0, 'a key never written has no history');
  check(a.limited.doc.length === 2, 'limit 2');
  const past = a.getAt[String(T_PAST)];
  check(past.doc === 'doc from the past' && past.early === 'e1' && past.note === null &&
    past.wal === 'w-past' && past.gone === null, `as of T_PAST: ${JSON.stringify(past)}`);
  check(a.getAt['0'].doc === null, 'nothing at 0');
  const now = a.getAt[String(MAX_TIMESTAMP)];
  check(now.doc === 'v4' && now.gone === null && now.early === null && now['f/0150'] === null &&
    now.bin === '\\xfe', `as of the largest timestamp: ${JSON.stringify(now)}`);
  for (const [t, r] of Object.entries(a.at)) {
    check(JSON.stringify(r.backward.slice().reverse()) === JSON.stringify(r.forward),
      `rangeAt ${t}: reverse is the forward order reversed`);
  }
  check(a.at[String(MAX_TIMESTAMP)].forward.length === 299 + 4, 'keys alive now');
}
