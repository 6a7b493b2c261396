// importIndexedDB() and importIndexedDBDump() in Chromium (docs/indexeddb.md):
//  - an IndexedDB database with several stores (out-of-line keys, an inline key path, a key
//    generator, an empty store, a store larger than a batch) holding every kind of key and many
//    kinds of value is imported through the client; each store's imported keys, decoded, are in
//    the order indexedDB.cmp gives the source's keys (the whole sorted lists are compared), the
//    values decode back to what IndexedDB holds, and the progress reports count the batches;
//  - the key encoding alone: sorting keys by their encodings gives indexedDB.cmp's order;
//  - a page reload in the middle of an import, then the same call again, finishes with exactly
//    the source's records; another source for that destination is refused while the marker is
//    there; a missing source or store is refused and creates nothing;
//  - INDXDB01 dumps (bytes and Blob) import; bad ones are refused by name and create nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { usePage } from '../page.mjs';

const LIMIT = { timeout: 240_000 };
const harness = usePage();

async function evaluate(fn, args) {
  return harness.page.evaluate(fn, args);
}

test('every key kind and value kind imports; key order is indexedDB.cmp order', LIMIT, async () => {
  const r = await evaluate(async () => {
    const data = await import('/e2e/pages/indexeddb-data.js');
    const skv = window.skv;
    const keys = data.allKeys();
    const values = data.allValues();
    const big = Array.from({ length: 2500 }, (_, i) => [i * 3, { i, text: `record ${i}`.repeat(5) }]);
    await data.makeSource('idb-all', {
      keys: { options: {}, records: keys.map((k, i) => [k, `key #${i}`]) },
      values: { options: {}, records: values.map((v, i) => [i, v]) },
      inline: { options: { keyPath: 'id' }, records: [[undefined, { id: 'b', v: 2 }],
        [undefined, { id: ['a', 1], v: 1 }], [undefined, { id: 3, v: 3 }]] },
      auto: { options: { autoIncrement: true }, records: ['x', 'y', 'z'].map((v) => [undefined, v]) },
      empty: { options: {}, records: [] },
      big: { options: {}, records: big },
    });
    const reports = [];
    const done = await skv.importIndexedDB('idb-all', {
      into: 'idb-all-copy', batchSize: 100, progress: (p) => { reports.push(p); },
    });
    const db = await skv.open('idb-all-copy', { createIfMissing: false });
    const out = { stores: {}, done, marker: await db.get(skv.INDEXEDDB_IMPORT_MARKER) };
    try {
      for (const store of ['auto', 'big', 'empty', 'inline', 'keys', 'values']) {
        const source = await data.readSource('idb-all', store);
        const [start, end] = skv.indexedDBStoreRange(store);
        const imported = await db.scan(start, end);
        const decoded = imported.map(([k]) => skv.splitIndexedDBKey(k));
        const problems = [];
        if (decoded.some((d) => d.store !== store)) problems.push('a key names another store');
        // The order: the source's keys sorted with indexedDB.cmp against the imported ones, in
        // skv's (bytewise) order.
        const sorted = source.map(([k]) => k).sort((a, b) => indexedDB.cmp(a, b));
        if (sorted.length !== decoded.length) {
          problems.push(`${decoded.length} imported, ${sorted.length} in the source`);
        } else {
          sorted.forEach((k, i) => {
            if (indexedDB.cmp(k, decoded[i].key) !== 0) problems.push(`key ${i} out of order`);
          });
        }
        for (let i = 0; i < Math.min(source.length, imported.length); i++) {
          const d = await data.difference(source[i][1], skv.decodeIndexedDBValue(imported[i][1]));
          if (d) problems.push(`record ${i}: ${d}`);
        }
        out.stores[store] = {
          count: imported.length, problems,
          batches: reports.filter((p) => p.store === store).length,
          lastRecords: reports.filter((p) => p.store === store).at(-1)?.records,
        };
      }
      out.total = await db.count();
    } finally {
      await db.close();
    }
    out.reports = reports.length;
    out.lastReport = reports.at(-1);
    out.keyCount = keys.length;
    out.valueCount = values.length;
    return out;
  });
  for (const [store, s] of Object.entries(r.stores)) {
    assert.deepEqual(s.problems, [], `store ${store}`);
  }
  assert.equal(r.stores.keys.count, r.keyCount);
  assert.equal(r.stores.values.count, r.valueCount);
  assert.equal(r.stores.inline.count, 3);
  assert.equal(r.stores.auto.count, 3);
  assert.equal(r.stores.empty.count, 0);
  assert.equal(r.stores.big.count, 2500);
  // 2,500 records in batches of 100: 25 batches, each its own transaction; the small stores
  // one each (the empty one too: it commits the marker's move to the next store).
  assert.equal(r.stores.big.batches, 25);
  assert.equal(r.stores.big.lastRecords, 2500);
  for (const s of ['auto', 'empty', 'inline', 'keys', 'values']) assert.equal(r.stores[s].batches, 1, s);
  assert.equal(r.reports, 30);
  assert.equal(r.marker, undefined);
  assert.equal(r.total, 2500 + 3 + 3 + r.keyCount + r.valueCount);
  assert.deepEqual(r.done, r.lastReport);
  assert.equal(r.done.done, true);
  assert.equal(r.done.storesDone, 6);
  assert.equal(r.done.storesTotal, 6);
});

test('bytewise order of encoded keys equals indexedDB.cmp order', LIMIT, async () => {
  const r = await evaluate(async () => {
    const data = await import('/e2e/pages/indexeddb-data.js');
    const skv = window.skv;
    // The listed keys, and random nestings of them.
    const base = data.allKeys();
    let seed = 7;
    const rnd = (n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const keys = [...base];
    for (let i = 0; i < 400; i++) {
      keys.push(Array.from({ length: rnd(4) }, () => (rnd(3) === 0
        ? [base[rnd(base.length)], base[rnd(base.length)]] : base[rnd(base.length)])));
    }
    const byCmp = [...keys].sort((a, b) => indexedDB.cmp(a, b));
    const byBytes = keys.map((k) => [k, skv.encodeIndexedDBKey(k)])
      .sort((a, b) => data.compareBytes(a[1], b[1]));
    let mismatches = 0;
    let roundTrips = 0;
    byCmp.forEach((k, i) => {
      if (indexedDB.cmp(k, byBytes[i][0]) !== 0) mismatches++;
      if (indexedDB.cmp(skv.decodeIndexedDBKey(byBytes[i][1]), byBytes[i][0]) === 0) roundTrips++;
    });
    // Equal keys (by cmp) must encode to equal bytes, and unequal keys to unequal bytes.
    let pairs = 0;
    for (let i = 0; i + 1 < byBytes.length; i++) {
      const c = indexedDB.cmp(byBytes[i][0], byBytes[i + 1][0]);
      const d = Math.sign(data.compareBytes(byBytes[i][1], byBytes[i + 1][1]));
      if (c === d) pairs++;
    }
    const refused = [];
    for (const bad of [NaN, new Date(NaN), {}, null, undefined, [1, NaN], true]) {
      try {
        skv.encodeIndexedDBKey(bad);
        refused.push('accepted');
      } catch (e) {
        refused.push(`${e.code}/${e.reason}`);
      }
    }
    let badBytes;
    try {
      skv.decodeIndexedDBKey(new Uint8Array([0x30, 0x41]));
    } catch (e) {
      badBytes = `${e.code}/${e.reason}`;
    }
    return { n: keys.length, mismatches, roundTrips, pairs, refused, badBytes };
  });
  assert.equal(r.mismatches, 0);
  assert.equal(r.roundTrips, r.n);
  assert.equal(r.pairs, r.n - 1);
  assert.deepEqual(r.refused, Array(7).fill('invalid_argument/invalid_key'));
  assert.equal(r.badBytes, 'invalid_argument/bad_encoding');
});

test('a reload in the middle of an import resumes and finishes exactly', LIMIT, async () => {
  const page = harness.page;
  // waitForLock: the reload ends the worker that holds the destination; the next open waits
  // for its Web Lock rather than racing its release.
  const args = { stores: ['r', 's'], batchSize: 50 };
  const openOptions = { waitForLock: true };
  await page.evaluate(async ({ stores, batchSize }) => {
    const data = await import('/e2e/pages/indexeddb-data.js');
    await data.makeSource('idb-resume', {
      r: { options: {}, records: Array.from({ length: 1000 }, (_, i) => [`k${i}`, { i }]) },
      s: { options: {}, records: Array.from({ length: 300 }, (_, i) => [[i, 'x'], new Uint8Array([i & 255])]) },
      t: { options: {}, records: [[1, 'not imported']] },
    });
    await data.makeSource('idb-other', { r: { options: {}, records: [[1, 1]] } });
    window.reports = [];
    // The 7th report reloads the page and lets the import go on: the reload ends the worker
    // while the next batch is under way.
    window.skv.importIndexedDB('idb-resume', {
      into: 'resume-copy', stores, batchSize, openOptions: { waitForLock: true },
      progress: (p) => {
        window.reports.push(p);
        if (window.reports.length === 7) location.reload();
      },
    }).catch(() => {});
    await new Promise(() => {});
  }, args).catch(() => {});
  await page.waitForFunction(() => window.ready === true && document.readyState === 'complete');
  const r = await page.evaluate(async ({ stores, batchSize, openOptions }) => {
    const skv = window.skv;
    const outcome = async (p) => {
      try {
        await p;
        return 'ok';
      } catch (e) {
        return `${e.code}/${e.reason}`;
      }
    };
    // The marker is there: another source, or other stores, is refused and leaves it alone.
    const other = await outcome(skv.importIndexedDB('idb-other',
      { into: 'resume-copy', openOptions }));
    const otherStores = await outcome(skv.importIndexedDB('idb-resume',
      { into: 'resume-copy', stores: ['r'], batchSize, openOptions }));
    const db0 = await skv.open('resume-copy', { createIfMissing: false, waitForLock: true });
    const marker = await db0.get(skv.INDEXEDDB_IMPORT_MARKER, { as: 'string' });
    const before = await db0.count();
    await db0.close();
    const reports = [];
    const done = await skv.importIndexedDB('idb-resume', {
      into: 'resume-copy', stores, batchSize, openOptions, progress: (p) => { reports.push(p); },
    });
    const db = await skv.open('resume-copy', { createIfMissing: false });
    const rs = await db.scan(...skv.indexedDBStoreRange('r'));
    const ss = await db.scan(...skv.indexedDBStoreRange('s'));
    const problems = [];
    const rKeys = Array.from({ length: 1000 }, (_, i) => `k${i}`).sort((a, b) => indexedDB.cmp(a, b));
    rs.forEach(([k, v], i) => {
      const { key } = skv.splitIndexedDBKey(k);
      const value = skv.decodeIndexedDBValue(v);
      if (key !== rKeys[i] || value.i !== Number(key.slice(1))) problems.push(`r ${i}`);
    });
    ss.forEach(([k, v], i) => {
      const { key } = skv.splitIndexedDBKey(k);
      const value = skv.decodeIndexedDBValue(v);
      if (key[0] !== i || key[1] !== 'x' || value[0] !== (i & 255)) problems.push(`s ${i}`);
    });
    const total = await db.count();
    const after = await db.get(skv.INDEXEDDB_IMPORT_MARKER);
    await db.close();
    return {
      other, otherStores, marker: JSON.parse(marker), before, first: reports[0],
      reports: reports.length, done, r: rs.length, s: ss.length, total, problems,
      markerAfter: after === undefined,
    };
  }, { ...args, openOptions });
  console.log(`resumed after the reload: marker ${JSON.stringify(r.marker)}, first report ` +
    `${JSON.stringify(r.first)}`);
  assert.equal(r.other, 'invalid_argument/source_mismatch');
  assert.equal(r.otherStores, 'invalid_argument/source_mismatch');
  // At least seven batches of 50 were committed before the reload (the import goes on until
  // the page unloads), and not all 26: the marker is still there.
  assert.ok(r.marker.batches >= 7 && r.marker.batches < 26, JSON.stringify(r.marker));
  const committed = (r.marker.store === 0 ? 0 : 1000) + r.marker.records;
  assert.equal(r.marker.batches, r.marker.store === 0 ? r.marker.records / 50
    : 20 + r.marker.records / 50);
  assert.equal(r.before, committed + 1);
  assert.equal(r.first.batches, r.marker.batches + 1);
  assert.equal(r.first.records, r.marker.records + 50);
  assert.equal(r.done.done, true);
  assert.equal(r.done.batches, 20 + 6);
  assert.equal(r.reports, 26 - r.marker.batches);
  assert.deepEqual(r.problems, []);
  assert.equal(r.r, 1000);
  assert.equal(r.s, 300);
  assert.equal(r.total, 1300);
  assert.ok(r.markerAfter);
});

test('a missing source or store is refused and creates nothing', LIMIT, async () => {
  const r = await evaluate(async () => {
    const skv = window.skv;
    const outcome = async (p) => {
      try {
        await p;
        return 'ok';
      } catch (e) {
        return `${e.code}/${e.reason}`;
      }
    };
    const missing = await outcome(skv.importIndexedDB('idb-none', { into: 'never-made' }));
    const store = await outcome(skv.importIndexedDB('idb-all', { into: 'never-made-2',
      stores: ['keys', 'nope'] }));
    const noInto = await outcome(skv.importIndexedDB('idb-all', {}));
    const badBatch = await outcome(skv.importIndexedDB('idb-all', { into: 'x', batchSize: 0 }));
    const badStores = await outcome(skv.importIndexedDB('idb-all', { into: 'x', stores: 'keys' }));
    // A marker that is not one the importer wrote is reported, never trusted.
    const marked = await skv.open('marker-bad');
    const good = { format: 1, source: 'idb-all', stores: ['auto'], store: 0, after: null,
      records: 0, bytes: 0, batches: 0 };
    const markers = [{ format: 1 }, { ...good, store: 1 }, { ...good, after: 'xyz' },
      { ...good, records: -1 }];
    const badMarkers = [];
    for (const m of markers) {
      await marked.set(skv.INDEXEDDB_IMPORT_MARKER, JSON.stringify(m));
      badMarkers.push(await outcome(skv.importIndexedDB('idb-all', { into: marked,
        stores: ['auto'] })));
    }
    await marked.set(skv.INDEXEDDB_IMPORT_MARKER, JSON.stringify(good));
    const goodMarker = await outcome(skv.importIndexedDB('idb-all', { into: marked,
      stores: ['auto'] }));
    const markerGone = (await marked.get(skv.INDEXEDDB_IMPORT_MARKER)) === undefined;
    await marked.close();
    const idbNames = (await indexedDB.databases()).map((d) => d.name);
    const names = await skv.listDatabases();
    return { missing, store, noInto, badBatch, badStores, idbNone: idbNames.includes('idb-none'),
      badMarkers, goodMarker, markerGone,
      made: names.filter((n) => n.startsWith('never-made') || n === 'x') };
  });
  assert.equal(r.missing, 'not_found/no_such_source');
  assert.equal(r.store, 'not_found/no_such_source');
  assert.equal(r.noInto, 'invalid_argument/undefined');
  assert.equal(r.badBatch, 'invalid_argument/undefined');
  assert.equal(r.badStores, 'invalid_argument/undefined');
  assert.equal(r.idbNone, false);
  assert.deepEqual(r.made, []);
  assert.deepEqual(r.badMarkers, Array(4).fill('corruption/undefined'));
  assert.equal(r.goodMarker, 'ok');
  assert.ok(r.markerGone);
});

test('INDXDB01 dumps import; bad dumps are refused by name and create nothing', LIMIT, async () => {
  const r = await evaluate(async () => {
    const data = await import('/e2e/pages/indexeddb-data.js');
    const skv = window.skv;
    const records = Array.from({ length: 250 }, (_, i) => [
      Uint8Array.from([i % 3, i >> 8, i & 255, 0]), Uint8Array.from({ length: i % 40 }, (_, j) => j ^ i)]);
    const dump = data.makeDump(records);
    const fromBytes = await skv.importIndexedDBDump(dump, 'dump-bytes');
    const fromBlob = await skv.importIndexedDBDump(new Blob([dump]), 'dump-blob', { batchSize: 40 });
    const sorted = [...records].sort((a, b) => data.compareBytes(a[0], b[0]));
    const same = async (name) => {
      const db = await skv.open(name, { createIfMissing: false });
      const got = await db.scan();
      await db.close();
      return got.length === sorted.length && got.every(([k, v], i) =>
        data.compareBytes(k, sorted[i][0]) === 0 && data.compareBytes(v, sorted[i][1]) === 0);
    };
    const empty = await skv.importIndexedDBDump(data.makeDump([]), 'dump-empty');
    // A Blob of 3.3 MB is read in 1 MiB windows: records straddle their edges.
    const large = Array.from({ length: 3000 }, (_, i) => [
      new TextEncoder().encode(`large/${String(i).padStart(5, '0')}`),
      Uint8Array.from({ length: 1000 + (i % 7) }, (_, j) => (i * 31 + j) & 255)]);
    const fromLarge = await skv.importIndexedDBDump(new Blob([data.makeDump(large)]),
      'dump-large', { batchBytes: 256 << 10 });
    // The rule of docs/indexeddb.md: a transaction ends at the record that takes its keys and
    // values to batchBytes or more.
    let largeBatches = 0;
    let acc = 0;
    for (const [k, v] of large) {
      acc += k.length + v.length;
      if (acc >= 256 << 10) {
        largeBatches++;
        acc = 0;
      }
    }
    if (acc > 0) largeBatches++;
    const ldb = await skv.open('dump-large', { createIfMissing: false });
    const lrows = await ldb.scan();
    await ldb.close();
    const largeSame = lrows.length === large.length && lrows.every(([k, v], i) =>
      data.compareBytes(k, large[i][0]) === 0 && data.compareBytes(v, large[i][1]) === 0);

    const outcome = async (bytes, name) => {
      try {
        await skv.importIndexedDBDump(bytes, name);
        return 'ok';
      } catch (e) {
        return `${e.code}/${e.reason}`;
      }
    };
    const good = data.makeDump(records.slice(0, 3));
    const badMagic = good.slice();
    badMagic[7] = 0x32;
    const longKey = data.makeDump([[new Uint8Array(65536), new Uint8Array(1)]]);
    const bad = {
      magic: await outcome(badMagic, 'bad-1'),
      short: await outcome(good.slice(0, 5), 'bad-2'),
      countHigh: await outcome(data.makeDump(records.slice(0, 3), 4), 'bad-3'),
      countLow: await outcome(data.makeDump(records.slice(0, 3), 2), 'bad-4'),
      pastEnd: await outcome(good.slice(0, good.length - 1), 'bad-5'),
      trailing: await outcome(new Uint8Array([...good, 1, 2]), 'bad-6'),
      emptyKey: await outcome(data.makeDump([[new Uint8Array(0), new Uint8Array(1)]]), 'bad-7'),
      longKey: await outcome(longKey, 'bad-8'),
      blobPastEnd: await outcome(new Blob([good.slice(0, good.length - 1)]), 'bad-9'),
      notBytes: await outcome('INDXDB01', 'bad-10'),
    };
    const names = await skv.listDatabases();
    return {
      fromBytes, fromBlob, empty, fromLarge, largeSame, largeBatches, bytesSame: await same('dump-bytes'),
      blobSame: await same('dump-blob'), bad, made: names.filter((n) => n.startsWith('bad-')),
    };
  });
  assert.equal(r.fromBytes.records, 250);
  assert.equal(r.fromBytes.batches, 1);
  assert.equal(r.fromBlob.records, 250);
  assert.equal(r.fromBlob.batches, 7);
  assert.equal(r.empty.records, 0);
  assert.equal(r.fromLarge.records, 3000);
  assert.ok(r.largeSame);
  assert.equal(r.fromLarge.batches, r.largeBatches);
  assert.ok(r.largeBatches > 10, `${r.largeBatches}`);
  assert.ok(r.bytesSame);
  assert.ok(r.blobSame);
  assert.deepEqual(r.bad, {
    magic: 'invalid_argument/bad_magic',
    short: 'invalid_argument/bad_magic',
    countHigh: 'invalid_argument/count_mismatch',
    countLow: 'invalid_argument/count_mismatch',
    pastEnd: 'invalid_argument/truncated',
    trailing: 'invalid_argument/trailing_bytes',
    emptyKey: 'invalid_argument/invalid_key',
    longKey: 'invalid_argument/key_too_large',
    blobPastEnd: 'invalid_argument/truncated',
    notBytes: 'invalid_argument/undefined',
  });
  assert.deepEqual(r.made, []);
});

test('the worker API imports into an open Database; batchBytes bounds each batch', LIMIT, async () => {
  await evaluate(async () => {
    const data = await import('/e2e/pages/indexeddb-data.js');
    await data.makeSource('idb-worker', {
      w: { options: {}, records: Array.from({ length: 600 }, (_, i) => [i, new Uint8Array(100).fill(i & 255)]) },
      odd: { options: {}, records: [[1, 'fine'], [2, { image: new ImageData(1, 1) }]] },
      long: { options: {}, records: [['\uffff'.repeat(30000), 'a key of 90,002 encoded bytes']] },
    });
  });
  const r = await evaluate((a) => window.runWorker('indexeddb-worker.js', a),
    { source: 'idb-worker', name: 'worker-copy', batchBytes: 4096 });
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  const res = r.result;
  assert.equal(res.count, 600);
  // Every record is 'w' 0x00 + a 9-byte number key and a 101-byte value: 112 bytes. A batch ends
  // at the record that takes it to 4,096 bytes or more: 37 records (4,144 bytes), so 600 records
  // take 16 batches of 37 and one of 8.
  assert.ok(res.sizes.every((s) => s === 112), `sizes ${[...new Set(res.sizes)]}`);
  const expected = Array.from({ length: 17 }, (_, i) => Math.min(600, (i + 1) * 37));
  assert.deepEqual(res.reports, expected);
  assert.deepEqual(res.bytes, expected.map((n) => n * 112));
  assert.equal(res.done.done, true);
  assert.equal(res.done.batches, 17);
  assert.equal(res.odd.code, 'invalid_argument');
  assert.equal(res.odd.reason, 'unsupported_value');
  assert.match(res.odd.message, /indexeddb:idb-worker\/odd: .*ImageData/);
  assert.equal(res.long.code, 'invalid_argument');
  assert.equal(res.long.reason, 'key_too_large');
  assert.equal(res.withOptions.code, 'invalid_argument');
  assert.deepEqual(res.dumped, { records: 1, bytes: 3, batches: 1 });
  assert.deepEqual(res.dumpValue, [42]);
  assert.ok(res.stillOpen);
});

test('the client imports into a Database it holds open, in that database\'s worker', LIMIT, async () => {
  const r = await evaluate(async () => {
    const skv = window.skv;
    const db = await skv.open('handle-copy');
    await db.set('mine', 'kept');
    const done = await skv.importIndexedDB('idb-all', { into: db, stores: ['inline', 'auto'] });
    const out = {
      done, count: await db.count(), mine: await db.get('mine', { as: 'string' }),
      auto: (await db.scan(...skv.indexedDBStoreRange('auto')))
        .map(([k, v]) => [skv.splitIndexedDBKey(k).key, skv.decodeIndexedDBValue(v)]),
    };
    // A progress callback that throws stops the import after the batch it was told about.
    let stopped;
    try {
      await skv.importIndexedDB('idb-all', { into: db, stores: ['big'], batchSize: 1000,
        progress: () => { throw new Error('stop here'); } });
    } catch (e) {
      stopped = e.message;
    }
    out.stopped = stopped;
    out.stoppedMarker = JSON.parse(await db.get(skv.INDEXEDDB_IMPORT_MARKER, { as: 'string' }));
    out.resumed = await skv.importIndexedDB('idb-all', { into: db, stores: ['big'],
      batchSize: 1000 });
    out.bigCount = await db.count(...skv.indexedDBStoreRange('big'));
    await db.close();
    try {
      await skv.importIndexedDB('idb-all', { into: db });
      out.afterClose = 'ok';
    } catch (e) {
      out.afterClose = e.code;
    }
    return out;
  });
  assert.equal(r.count, 7);
  assert.equal(r.mine, 'kept');
  assert.deepEqual(r.auto, [[1, 'x'], [2, 'y'], [3, 'z']]);
  assert.equal(r.done.storesDone, 2);
  assert.equal(r.afterClose, 'closed');
  assert.equal(r.stopped, 'stop here');
  assert.equal(r.stoppedMarker.batches, 1);
  assert.equal(r.stoppedMarker.records, 1000);
  assert.equal(r.resumed.batches, 3);
  assert.equal(r.resumed.records, 2500);
  assert.equal(r.bigCount, 2500);
});

test('the worker checks the import requests it receives and always answers', LIMIT, async () => {
  const r = await evaluate(async () => {
    const { rawProtocol } = await import('/e2e/pages/raw-protocol.js');
    const p = rawProtocol();
    const out = {
      badTarget: await p.code('idbImportOpen', ['idb-all', 'raw-x', {}]),
      extraTarget: await p.code('idbImportOpen', ['idb-all', { name: 'raw-x', evil: 1 }, {}]),
      unknownDb: await p.code('idbImportOpen', ['idb-all', { db: 99 }, {}]),
      badOption: await p.code('idbImportOpen', ['idb-all', { name: 'raw-x' }, { batchSize: 1.5 }]),
      progressSent: await p.code('idbImportOpen', ['idb-all', { name: 'raw-x' }, { progress: 1 }]),
      badSource: await p.code('idbImportOpen', [7, { name: 'raw-x' }, {}]),
      stepBadId: await p.code('idbImportStep', [-1]),
      stepUnknown: await p.code('idbImportStep', [12345]),
      closeUnknown: await p.code('idbImportClose', [12345]),
      dumpString: await p.code('importIndexedDBDump', ['INDXDB01', { name: 'raw-x' }, {}]),
      dumpBadOption: await p.code('importIndexedDBDump',
        [new Uint8Array(12), { name: 'raw-x' }, { openOptions: {} }]),
    };
    // A real one through the raw protocol: open, two steps at once (the second refused), close.
    const opened = await p.send('idbImportOpen', ['idb-all', { name: 'raw-y' }, { stores: ['big'], batchSize: 1000 }]);
    out.opened = opened.ok;
    const [a, b] = await Promise.all([p.send('idbImportStep', [opened.result.id]),
      p.send('idbImportStep', [opened.result.id])]);
    out.twoSteps = [p.answer(a), p.answer(b)];
    const { bytes, ...firstStep } = a.result;
    out.firstStep = firstStep;
    out.firstBytes = bytes;
    out.close = await p.code('idbImportClose', [opened.result.id]);
    out.stepAfterClose = await p.code('idbImportStep', [opened.result.id]);
    out.errors = p.errors();
    p.worker.terminate();
    out.made = (await window.skv.listDatabases()).filter((n) => n.startsWith('raw-'));
    return out;
  });
  // 1,000 records of 'big': keys of 'big' 0x00 + 9 bytes, values of more than 50 bytes each.
  assert.ok(r.firstBytes > 1000 * 63, `bytes ${r.firstBytes}`);
  delete r.firstBytes;
  assert.deepEqual(r, {
    badTarget: 'invalid_argument', extraTarget: 'invalid_argument', unknownDb: 'closed',
    badOption: 'invalid_argument', progressSent: 'invalid_argument', badSource: 'invalid_argument',
    stepBadId: 'invalid_argument', stepUnknown: 'closed', closeUnknown: 'ok',
    dumpString: 'invalid_argument', dumpBadOption: 'invalid_argument',
    opened: true, twoSteps: ['ok', 'invalid_argument'],
    firstStep: { store: 'big', records: 1000, storesDone: 0, storesTotal: 1, batches: 1,
      done: false },
    close: 'ok', stepAfterClose: 'closed', errors: 0, made: ['raw-y'],
  });
});

test('an upgrade of the source during an import is not blocked; the import stops and resumes', LIMIT, async () => {
  const r = await evaluate(async () => {
    const data = await import('/e2e/pages/indexeddb-data.js');
    const skv = window.skv;
    await data.makeSource('idb-upgrade', {
      u: { options: {}, records: Array.from({ length: 500 }, (_, i) => [i, `v${i}`]) },
    });
    const upgrade = () => new Promise((resolve, reject) => {
      const req = indexedDB.open('idb-upgrade', 2);
      req.onupgradeneeded = () => req.result.createObjectStore('added');
      req.onsuccess = () => {
        req.result.close();
        resolve('upgraded');
      };
      req.onerror = () => reject(req.error);
      req.onblocked = () => resolve('blocked');
    });
    let upgraded = null;
    let first;
    try {
      await skv.importIndexedDB('idb-upgrade', {
        into: 'upgrade-copy', stores: ['u'], batchSize: 100,
        progress: async (p) => {
          if (p.batches === 2) upgraded = await upgrade();
        },
      });
      first = 'finished';
    } catch (e) {
      first = `${e.code}`;
    }
    const done = await skv.importIndexedDB('idb-upgrade', {
      into: 'upgrade-copy', stores: ['u'], batchSize: 100,
    });
    const db = await skv.open('upgrade-copy', { createIfMissing: false });
    const rows = await db.scan(...skv.indexedDBStoreRange('u'));
    await db.close();
    const ok = rows.every(([k, v], i) => skv.splitIndexedDBKey(k).key === i &&
      skv.decodeIndexedDBValue(v) === `v${i}`);
    return { upgraded, first, done, count: rows.length, ok };
  });
  assert.equal(r.upgraded, 'upgraded');
  assert.equal(r.first, 'busy');
  assert.equal(r.done.done, true);
  assert.equal(r.done.batches, 5);
  assert.equal(r.count, 500);
  assert.ok(r.ok);
});
