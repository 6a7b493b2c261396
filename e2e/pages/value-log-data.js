// The data of the value log tests (tests/value-log.mjs), shared by their worker
// (value-log-worker.js) and the page code that runs through the main-thread client: a versioned
// database with the value log on (threshold 256 bytes, values of 1 to 4 KiB beside a few small
// ones), written with several versions per key (commits at the time now, setAt in the past,
// deletes), and the questions asked of it. Answers are plain strings, as the native skv tool
// prints them, so the two APIs, a reopen, garbage collection and the tool can be compared with
// deepEqual. Timestamps travel as decimal strings.

export const T_PAST = 1_600_000_000_000_000_000n;
export const MAX_TIMESTAMP = 0x7fffffffffffffffn;
// One hour: the versions committed now stay, the older past ones are dropped by compaction
// (all but the newest before the cutoff), which leaves garbage in the value log.
export const RETENTION_NS = 3_600_000_000_000n;
export const THRESHOLD = 256;

/** The open options of the tests' database. */
export function openOptions() {
  return {
    versioning: { retentionNs: RETENTION_NS },
    valueLog: { threshold: THRESHOLD, maxFileSize: 64 << 10, gcRatio: 0.5, cacheSize: 1 << 20 },
    memtableSize: 1 << 20,
  };
}

const BIG = 24;
export const KEYS = [
  ...Array.from({ length: BIG }, (_, i) => `v/${String(i).padStart(2, '0')}`),
  's/0', 's/1', 'mix', 'missing',
];

// A value of 1 to 4 KiB (printable ASCII), different for every key and label.
export function big(key, label) {
  let h = 2166136261;
  for (const c of `${key}|${label}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  const size = 1024 + (h % 3073);
  const unit = `${key}:${label}:${(h >>> 8).toString(36)} `;
  return `${label}=${unit.repeat(Math.ceil(size / unit.length))}`.slice(0, size);
}

/** Writes the database, up to (not including) garbage collection. Returns nothing. */
export async function writeVersions(db) {
  const bigKeys = KEYS.slice(0, BIG);
  let tx = db.begin();
  bigKeys.forEach((k, i) => {
    tx.setAt(k, big(k, 'p0'), T_PAST + 100n + BigInt(i));
    tx.setAt(k, big(k, 'p1'), T_PAST + 200n + BigInt(i));
  });
  tx.setAt('s/0', 'small p0', T_PAST + 100n);
  tx.setAt('mix', 'mix small p0', T_PAST + 100n);
  tx.setAt('mix', big('mix', 'p1'), T_PAST + 200n);
  await tx.commit();
  tx = db.begin();
  for (const k of bigKeys) tx.set(k, big(k, 'n1'));
  tx.set('s/0', 'small n1');
  tx.set('s/1', 'small n1');
  await tx.commit();
  await db.flush();
  tx = db.begin();
  bigKeys.forEach((k, i) => tx.setAt(k, big(k, 'p2'), T_PAST + 300n + BigInt(i)));
  tx.setAt('mix', 'mix small p2', T_PAST + 300n);
  await tx.commit();
  for (let i = 0; i < BIG; i += 2) await db.set(bigKeys[i], big(bigKeys[i], 'n2'));
  for (let i = 0; i < BIG; i += 5) await db.delete(bigKeys[i]);
  await db.delete('s/1');
  await db.set('mix', big('mix', 'n1'));
  await db.flush();
  await db.compact();
}

/** Writes that stay in the WAL (after garbage collection). */
export async function writeTail(db) {
  await db.set('v/01', big('v/01', 'n3'));
  await db.set('mix', 'mix small n2');
  await db.setAt('v/03', big('v/03', 'p3'), T_PAST + 250n);
}

/**
 * The timestamps the questions are asked at: 0, the largest, around the past versions, and
 * around the versions committed now of two keys. Decimal strings, sorted.
 */
export async function questionTimes(db) {
  const set = new Set([0n, MAX_TIMESTAMP, T_PAST + 99n, T_PAST + 150n, T_PAST + 205n,
    T_PAST + 250n, T_PAST + 310n, T_PAST + 400n]);
  for (const k of ['v/00', 'mix']) {
    for (const v of await db.history(k, { includeTombstones: true })) {
      if (v.timestamp > T_PAST + 1000n) set.add(v.timestamp).add(v.timestamp - 1n);
    }
  }
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
}

async function collect(iter) {
  const out = [];
  for await (const entry of iter) out.push(entry);
  return out;
}

/**
 * Every answer, from either API, as the native tool prints it: history ('<ts>\t<value>',
 * '<ts> deleted'), getAt (null for none), rangeAt both ways. Values are strings (as: 'string');
 * every value here is printable ASCII, which the tool prints unchanged.
 */
export async function answers(db, times) {
  const out = { history: {}, tombstones: {}, getAt: {}, forward: {}, backward: {} };
  const lines = (versions) => versions.map((x) =>
    (x.tombstone ? `${x.timestamp} deleted` : `${x.timestamp}\t${x.value}`));
  for (const k of KEYS) {
    out.history[k] = lines(await db.history(k, { as: 'string' }));
    out.tombstones[k] = lines(await db.history(k, { as: 'string', includeTombstones: true }));
  }
  for (const t of times) {
    const ts = BigInt(t);
    const got = {};
    for (const k of KEYS) got[k] = (await db.getAt(k, ts, { as: 'string' })) ?? null;
    out.getAt[t] = got;
    out.forward[t] = (await collect(db.rangeAt(undefined, undefined, ts,
      { as: 'string', batchSize: 5 }))).map(([k, v]) => `${k}\t${v}`);
    out.backward[t] = (await collect(db.rangeAt(undefined, undefined, ts,
      { as: 'string', reverse: true }))).map(([k, v]) => `${k}\t${v}`);
  }
  return out;
}

/** Facts the answers must show whatever the commit times were. */
export function checkFacts(a, check) {
  // v/01: n3 (in the WAL), n1, and p2, the newest before the retention cutoff; compaction
  // dropped p0 and p1.
  const h = a.history['v/01'];
  check(h.length === 3 && h[0].endsWith(big('v/01', 'n3')) && h[1].endsWith(big('v/01', 'n1')) &&
    h[2] === `${T_PAST + 301n}\t${big('v/01', 'p2')}`, `v/01: ${h.map((x) => x.slice(0, 40))}`);
  // v/00: deleted now, after n2 and n1; p2 before the cutoff.
  const t = a.tombstones['v/00'];
  check(t.length === 4 && t[0].endsWith(' deleted') && t[1].endsWith(big('v/00', 'n2')),
    `v/00: ${t.map((x) => x.slice(0, 40))}`);
  check(a.history.missing.length === 0, 'a key never written has no history');
  check(a.tombstones['s/1'].length === 2, `s/1: ${a.tombstones['s/1']}`);
  const past = a.getAt[String(T_PAST + 310n)];
  check(past['v/05'] === big('v/05', 'p2') && past['s/0'] === 'small p0' &&
    past.mix === 'mix small p2', `as of T_PAST + 310: ${JSON.stringify(past).slice(0, 200)}`);
  const now = a.getAt[String(MAX_TIMESTAMP)];
  check(now['v/00'] === null && now['v/02'] === big('v/02', 'n2') &&
    now['v/03'] === big('v/03', 'n1') && now['s/0'] === 'small n1' && now['s/1'] === null,
  `now: ${JSON.stringify(now).slice(0, 200)}`);
  for (const [ts, f] of Object.entries(a.forward)) {
    check(JSON.stringify(a.backward[ts].slice().reverse()) === JSON.stringify(f),
      `rangeAt ${ts}: reverse is the forward order reversed`);
  }
}
