// The data and checks of the IndexedDB import test (e2e/tests/indexeddb-import.mjs), run in the
// page: source databases made with the page's own IndexedDB, a structural comparison of values
// that knows the types structured clone keeps, and INDXDB01 dumps, good and bad.

// Every kind of key, in no particular order. -0 stands for 0 (IndexedDB holds them equal).
export function allKeys() {
  const units = (...u) => String.fromCharCode(...u);
  const bytes = (...b) => Uint8Array.from(b).buffer;
  return [
    'z', 1.5, -0, Infinity, -Infinity, -1e300, 1e300, 5e-324, -5e-324, -1, 1, 2 ** 53, -(2 ** 53),
    0.1, 7,
    new Date(0), new Date(-1e12), new Date(1e12), new Date(8.64e15), new Date(-8.64e15),
    new Date(1),
    '', 'a', 'a\0', 'ab', 'A', '\x7e', '\x7f', '\x80', 'é', units(0x407e), units(0x407f),
    units(0xd7ff), units(0xd800), units(0xd800, 0xdc00), units(0xdbff, 0xdfff), units(0xdc00),
    units(0xe000), units(0xfffd), units(0xffff), 'a'.repeat(300), '\0', '\0\0', '😀', 'Ω',
    bytes(), bytes(0), bytes(0, 0), bytes(0, 1), bytes(1), bytes(1, 0), bytes(2), bytes(254),
    bytes(255), bytes(255, 255), bytes(1, 2, 3, 4, 5, 6, 7, 8, 9),
    [], [0], [-1], [0, 'a'], ['a'], ['a', 'b'], [''], [[]], [[1]], [[], []], [new Date(0)],
    [[[]]], [bytes(0)], [bytes()], [1, [2, [3, ['x']]]], [Infinity, -Infinity], [[0], 'z'],
  ];
}

// Values of every kind the importer encodes, keyed by their index.
export function allValues() {
  const cyclic = { name: 'cyclic' };
  cyclic.self = cyclic;
  const shared = new ArrayBuffer(16);
  new Uint8Array(shared).set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  const sparse = [1, , 3];
  sparse.extra = 'kept';
  const list = [1, 2];
  list.push(list);
  const ref = { a: 1 };
  return [
    'plain text', '', 'é😀', 'lone \ud800 surrogate', new Uint8Array([0, 1, 255]),
    new ArrayBuffer(5), new Float64Array([1.5, -0, NaN, Infinity]), new Int16Array([-1, 2]),
    new DataView(new Uint8Array([9, 8, 7]).buffer), new BigInt64Array([-5n, 2n ** 62n]),
    0, -0, NaN, Infinity, 3.25, true, false, null, undefined, 12345678901234567890123n, -7n,
    new Date(1234567), new Date(NaN), /a+[b]$/giu, new Map([[1, 'one'], ['k', { deep: [1] }]]),
    new Set(['a', 1, null]), { a: 1, b: [2, { c: 'd' }], e: { f: { g: null } } }, [1, 'x', [2]],
    cyclic, { views: [new Uint8Array(shared, 2, 4), new Uint16Array(shared, 4, 2)] }, sparse,
    list, { twice: [ref, ref] }, new Number(5), new String('boxed'), new Boolean(true),
    Object(3n), new RangeError('out of range'), new Map([[ref, new Set([ref])]]),
    new Blob(['blob bytes'], { type: 'text/plain' }),
    new File([new Uint8Array([1, 2, 3])], 'f.bin', { type: 'application/x-test', lastModified: 1700000000000 }),
    { nested: { blob: new Blob([new Uint8Array(1000).fill(7)]) } },
    { ['__proto__']: 'own' }, Object.assign(Object.create(null), { x: 1 }),
  ];
}

/** Deletes IndexedDB database `name` if it exists. */
export function dropSource(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}

/**
 * Makes IndexedDB database `name` with `stores`: { [store]: { options, records: [[key, value]]
 * (key undefined for inline keys and generators) } }.
 */
export async function makeSource(name, stores) {
  await dropSource(name);
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(name, 1);
    req.onupgradeneeded = () => {
      for (const [store, { options }] of Object.entries(stores)) {
        req.result.createObjectStore(store, options);
      }
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  for (const [store, { records }] of Object.entries(stores)) {
    await new Promise((resolve, reject) => {
      const tx = db.transaction(store, 'readwrite');
      const os = tx.objectStore(store);
      for (const [key, value] of records) {
        if (key === undefined) os.put(value);
        else os.put(value, key);
      }
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
  }
  db.close();
}

/** Every [key, value] of `store` of IndexedDB database `name`, in IndexedDB's order. */
export async function readSource(name, store) {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(store, 'readonly');
      const keys = tx.objectStore(store).getAllKeys();
      const values = tx.objectStore(store).getAll();
      tx.oncomplete = () => resolve(keys.result.map((k, i) => [k, values.result[i]]));
      tx.onerror = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

const tag = (x) => Object.prototype.toString.call(x).slice(8, -1);

/**
 * Where `a` and `b` differ, as a path and a reason, or null when they are the same value as
 * structured clone sees them: same types, same contents, same sharing and cycles. Blob contents
 * are compared too (asynchronously).
 */
export async function difference(a, b) {
  const pairs = new Map();
  const blobs = [];
  const walk = (x, y, path) => {
    if (typeof x !== typeof y) return `${path}: ${typeof x} vs ${typeof y}`;
    if (typeof x !== 'object' || x === null || y === null) {
      return Object.is(x, y) ? null : `${path}: ${String(x)} vs ${String(y)}`;
    }
    if (pairs.has(x)) return pairs.get(x) === y ? null : `${path}: sharing differs`;
    pairs.set(x, y);
    const t = tag(x);
    if (t !== tag(y)) return `${path}: ${t} vs ${tag(y)}`;
    if (Object.getPrototypeOf(x) === null) {
      if (Object.getPrototypeOf(y) !== Object.prototype && Object.getPrototypeOf(y) !== null) {
        return `${path}: prototype`;
      }
    } else if (Object.getPrototypeOf(x) !== Object.getPrototypeOf(y) &&
      Object.getPrototypeOf(y) !== null) {
      return `${path}: prototypes differ`;
    }
    switch (t) {
      case 'Date': return Object.is(x.getTime(), y.getTime()) ? null : `${path}: date`;
      case 'RegExp': return x.source === y.source && x.flags === y.flags ? null : `${path}: regexp`;
      case 'Number': case 'String': case 'Boolean': case 'BigInt':
        return Object.is(x.valueOf(), y.valueOf()) ? null : `${path}: boxed`;
      case 'ArrayBuffer': {
        const p = new Uint8Array(x);
        const q = new Uint8Array(y);
        return p.length === q.length && p.every((v, i) => v === q[i]) ? null : `${path}: bytes`;
      }
      case 'Blob': case 'File':
        if (x.size !== y.size || x.type !== y.type) return `${path}: blob size or type`;
        if (t === 'File' && (x.name !== y.name || x.lastModified !== y.lastModified)) {
          return `${path}: file name or date`;
        }
        blobs.push([x, y, path]);
        return null;
      case 'Map': {
        if (x.size !== y.size) return `${path}: map size`;
        const xs = [...x];
        const ys = [...y];
        for (let i = 0; i < xs.length; i++) {
          const d = walk(xs[i][0], ys[i][0], `${path}<key ${i}>`) ??
            walk(xs[i][1], ys[i][1], `${path}<value ${i}>`);
          if (d) return d;
        }
        return null;
      }
      case 'Set': {
        if (x.size !== y.size) return `${path}: set size`;
        const xs = [...x];
        const ys = [...y];
        for (let i = 0; i < xs.length; i++) {
          const d = walk(xs[i], ys[i], `${path}<${i}>`);
          if (d) return d;
        }
        return null;
      }
      default:
        break;
    }
    if (t === 'Error') {
      return x.name === y.name && x.message === y.message ? null : `${path}: error`;
    }
    if (ArrayBuffer.isView(x)) {
      if (x.byteOffset !== y.byteOffset || x.byteLength !== y.byteLength) {
        // A top-level view keeps only its own bytes; compare those.
        if (path !== 'value') return `${path}: view offset or length`;
      }
      const p = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
      const q = new Uint8Array(y.buffer, y.byteOffset, y.byteLength);
      if (!(p.length === q.length && p.every((v, i) => v === q[i]))) return `${path}: view bytes`;
      return path === 'value' ? null : walk(x.buffer, y.buffer, `${path}.buffer`);
    }
    const kx = Object.keys(x);
    const ky = Object.keys(y);
    if (kx.join('\0') !== ky.join('\0')) return `${path}: keys ${kx} vs ${ky}`;
    if (Array.isArray(x) && x.length !== y.length) return `${path}: length`;
    for (const k of kx) {
      const d = walk(x[k], y[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  };
  const d = walk(a, b, 'value');
  if (d) return d;
  for (const [x, y, path] of blobs) {
    const p = new Uint8Array(await x.arrayBuffer());
    const q = new Uint8Array(await y.arrayBuffer());
    if (!(p.length === q.length && p.every((v, i) => v === q[i]))) return `${path}: blob bytes`;
  }
  return null;
}

/** An INDXDB01 dump of `records` ([key, value] byte arrays); `count` overrides the header. */
export function makeDump(records, count = records.length) {
  const size = 12 + records.reduce((n, [k, v]) => n + 8 + k.length + v.length, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode('INDXDB01'));
  view.setUint32(8, count);
  let at = 12;
  for (const [k, v] of records) {
    view.setUint32(at, k.length);
    out.set(k, at + 4);
    at += 4 + k.length;
    view.setUint32(at, v.length);
    out.set(v, at + 4);
    at += 4 + v.length;
  }
  return out;
}

export function compareBytes(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
