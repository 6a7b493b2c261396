// The browser half of the native round trip: writes a database with binary keys and values,
// deletes, tables on two levels and WAL-only data, checks it against a model, then returns
// the browser's view of it and the files exportFiles() gives, all base64-encoded.
import { open, deleteDatabase } from '/web/src/worker.js';
import { serve, check } from './harness.js';

const enc = new TextEncoder();
const bytes = (x) => (typeof x === 'string' ? enc.encode(x) : x);
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function base64(b) {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

// Deterministic bytes: every byte value shows up, including the ones the CLI escapes.
function noise(seed, length) {
  const out = new Uint8Array(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

const nkey = (i) => `n/${String(i).padStart(5, '0')}`;

// Three stages of transactions: [kind, key, value]. Stage 1 and 2 end with a flush (stage 2 also
// with a full compaction); stage 3 stays in the WAL.
function stages() {
  const s1 = [];
  for (let i = 0; i < 2500; i++) s1.push(['set', nkey(i), `value ${i} \\ back\tslash`]);
  for (let i = 0; i < 500; i++) {
    s1.push(['set', noise(i, 1 + (i % 24)), noise(i + 100000, i % 300)]);
  }
  // Edge cases: a key of every single byte value, an empty value, a large value.
  for (let b = 0; b < 256; b++) {
    s1.push(['set', new Uint8Array([0x62, b]), new Uint8Array([b, b, 0x5c])]);
  }
  s1.push(['set', 'empty-value', new Uint8Array(0)]);
  s1.push(['set', 'large-value', noise(7, 40000)]);
  const s2 = [];
  for (let i = 0; i < 2500; i += 4) s2.push(['set', nkey(i), noise(i, 12)]);
  for (let i = 1; i < 2500; i += 9) s2.push(['delete', nkey(i)]);
  for (let b = 0; b < 256; b += 3) s2.push(['delete', new Uint8Array([0x62, b])]);
  const s3 = [];
  for (let i = 2500; i < 3000; i++) s3.push(['set', nkey(i), `wal-only ${i}`]);
  for (let i = 2; i < 2500; i += 11) s3.push(['delete', nkey(i)]);
  s3.push(['set', new Uint8Array([0x00]), new Uint8Array([0xff, 0x00, 0x0a])]);
  s3.push(['set', new Uint8Array([0xff, 0xff]), 'last key']);
  return [s1, s2, s3];
}

function model(all) {
  const m = new Map();
  for (const ops of all) {
    for (const [kind, key, value] of ops) {
      const k = bytes(key);
      if (kind === 'set') m.set(hex(k), [k, bytes(value)]);
      else m.delete(hex(k));
    }
  }
  return [...m.values()].sort((a, b) => compareBytes(a[0], b[0]));
}

serve(async ({ name }) => {
  await deleteDatabase(name);
  const db = await open(name, { memtableSize: 128 << 10, targetFileSize: 128 << 10 });
  const all = stages();
  for (let s = 0; s < all.length; s++) {
    const ops = all[s];
    for (let c = 0; c < ops.length; c += 400) {
      const tx = db.begin();
      for (const [kind, key, value] of ops.slice(c, c + 400)) {
        if (kind === 'set') tx.set(key, value);
        else tx.delete(key);
      }
      await tx.commit();
    }
    if (s === 0) await db.flush();
    if (s === 1) {
      await db.flush();
      await db.compact();
    }
  }
  const expected = model(all);
  const seen = db.scan();
  check(seen.length === expected.length,
    `browser scan: ${seen.length} entries, model ${expected.length}`);
  seen.forEach(([k, v], i) => {
    check(compareBytes(k, expected[i][0]) === 0 && compareBytes(v, expected[i][1]) === 0,
      `browser scan entry ${i}: ${hex(k)} differs from the model`);
  });
  const stats = db.stats();
  const files = db.exportFiles();
  await db.close();
  return {
    count: seen.length,
    entries: seen.map(([k, v]) => [base64(k), base64(v)]),
    files: files.map(([file, data]) => [file, base64(data)]),
    stats: {
      flushes: stats.flushes,
      compactions: stats.compactions,
      filesPerLevel: stats.filesPerLevel,
      memtableBytes: stats.memtableBytes,
    },
  };
});
