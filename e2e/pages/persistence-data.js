// The data of the persistence test, shared by its worker (persistence-worker.js) and the page
// code the test runs through the main-thread client: the writes of each stage, as transactions,
// and the model of what the database holds after a stage.

const enc = new TextEncoder();

const pad = (i) => String(i).padStart(6, '0');
export const textKey = (i) => `p/${pad(i)}`;

// Binary keys sort around the text keys: [0x00, j, 0xff] before them, [0xff, j, 0x00, 0x0a]
// after them.
const lowKey = (j) => new Uint8Array([0x00, j, 0xff]);
const highKey = (j) => new Uint8Array([0xff, j, 0x00, 0x0a]);
const binaryValue = (j, salt) => {
  const v = new Uint8Array((j % 17) + 1);
  for (let x = 0; x < v.length; x++) v[x] = (j + x * salt) & 0xff;
  return v;
};

// Stage 1 is written by a worker, stage 2 through the main-thread client. Each is a list of
// transactions; each transaction a list of [kind ('set' | 'delete'), key, value].
export function stageOps(stage) {
  const txs = [];
  if (stage === 1) {
    let tx = [];
    const cut = () => {
      txs.push(tx);
      tx = [];
    };
    for (let i = 0; i < 3000; i++) {
      // Mostly short values, every 50th a 3 KB one so some blocks hold a single entry.
      const fill = i % 50 === 0 ? 'L'.repeat(3000) : 'x'.repeat(i % 97);
      tx.push(['set', textKey(i), `v1-${i}-${fill}`]);
      if (tx.length === 500) cut();
    }
    for (let j = 0; j < 256; j++) {
      tx.push(['set', lowKey(j), binaryValue(j, 3)]);
      tx.push(['set', highKey(j), binaryValue(j, 5)]);
    }
    cut();
    for (let i = 0; i < 3000; i += 7) tx.push(['set', textKey(i), `v2-${i}`]);
    for (let i = 0; i < 3000; i += 10) tx.push(['delete', textKey(i)]);
    for (let j = 0; j < 256; j += 5) tx.push(['delete', highKey(j)]);
    cut();
  } else if (stage === 2) {
    const tx = [];
    for (let i = 3000; i < 3500; i++) tx.push(['set', textKey(i), `c-${i}`]);
    for (let i = 0; i < 3000; i += 3) tx.push(['delete', textKey(i)]);
    tx.push(['set', new Uint8Array([0x01, 0x02]), new Uint8Array([0x00, 0xff, 0x0a, 0x5c])]);
    tx.push(['set', lowKey(7), new Uint8Array(0)]);
    txs.push(tx);
    // Single-operation shortcuts (db.set / db.delete), one transaction each.
    txs.push([['set', 'client:one', 'uno']]);
    txs.push([['delete', textKey(1)]]);
  }
  return txs;
}

const bytes = (x) => (typeof x === 'string' ? enc.encode(x) : x);
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

export function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// The sorted [key, value] pairs (Uint8Array) after every stage up to `stage`.
export function model(stage) {
  const m = new Map();
  for (let s = 1; s <= stage; s++) {
    for (const tx of stageOps(s)) {
      for (const [kind, key, value] of tx) {
        const k = bytes(key);
        if (kind === 'set') m.set(hex(k), [k, bytes(value)]);
        else m.delete(hex(k));
      }
    }
  }
  return [...m.values()].sort((a, b) => compareBytes(a[0], b[0]));
}

const show = (b) => (b === undefined ? 'nothing' : hex(b).slice(0, 64));

// null when `actual` (a list of [key, value] with Uint8Array fields) equals `expected`, else a
// description of the first difference.
export function diff(actual, expected, what) {
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    const [ak, av] = actual[i] || [];
    const [ek, ev] = expected[i] || [];
    if (!ak || !ek || !av || !ev || compareBytes(ak, ek) !== 0 || compareBytes(av, ev) !== 0) {
      return `${what}: entry ${i} of ${actual.length} (expected ${expected.length}): got key ` +
        `${show(ak)} value ${show(av)}, expected key ${show(ek)} value ${show(ev)}`;
    }
  }
  return null;
}

// The database that a worker leaves open when the page reloads: `count` keys, one Immediate
// commit each.
export const heldKey = (i) => `held/${pad(i)}`;
export const heldValue = (i) => `held-value-${i}`;
export const HELD_COUNT = 200;
