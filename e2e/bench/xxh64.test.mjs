// Checks the BigInt XXH64 and the "string26" keys: the reference vectors, and (if Debian's
// `xxhash` package is installed) the xxhsum tool on inputs of every length class.
//
//   node --test e2e/bench/xxh64.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { xxh64Hex } from './xxh64.js';
import { makeKey, makeValue, Rng, MIN_VALUE_SIZE, MAX_VALUE_SIZE } from './workload.js';

const bytes = (s) => new TextEncoder().encode(s);

test('reference vectors', () => {
  assert.equal(xxh64Hex(bytes('')), 'ef46db3751d8e999');
  assert.equal(xxh64Hex(bytes('abc')), '44bc2cf5ad770999');
  // Checked with `printf '\x00\x00\x00\x01' | xxhsum -H64` (xxhash 0.8.1).
  assert.equal(xxh64Hex(new Uint8Array([0, 0, 0, 1])), '5b1bd2a964692595');
  assert.equal(xxh64Hex(new Uint8Array([0, 0, 0, 0])), '3aefa6fd5cf2deb4');
});

test('string26 keys', () => {
  assert.equal(makeKey(0), '3aefa6fd5cf2deb40000000000');
  assert.equal(makeKey(1), '5b1bd2a9646925950000000001');
  assert.equal(makeKey(1234567), makeKey(1234567).slice(0, 16) + '0001234567');
  assert.equal(makeKey(4000000000).length, 26);
});

test('values: 674..1011 bytes, fresh each time', () => {
  const rng = new Rng(7);
  const seen = new Set();
  let total = 0;
  for (let i = 0; i < 2000; i++) {
    const v = makeValue(rng, i * 7919);
    assert.ok(v.length >= MIN_VALUE_SIZE && v.length <= MAX_VALUE_SIZE, `size ${v.length}`);
    total += v.length;
    const text = new TextDecoder().decode(v);
    seen.add(text);
    // A JSON document: its id is the index, its text field random alphanumerics.
    const doc = JSON.parse(text);
    assert.equal(doc.id, i * 7919);
    assert.equal(typeof doc.active, 'boolean');
    assert.ok(Number.isInteger(doc.score) && doc.score >= 0 && doc.score < 2 ** 24);
    assert.equal(doc.tags.length, 3);
    assert.match(doc.text, /^[a-zA-Z0-9 .]+$/);
  }
  assert.equal(seen.size, 2000);
  const mean = total / 2000;
  assert.ok(mean > 820 && mean < 865, `mean size ${mean}`);
});

const hasXxhsum = spawnSync('xxhsum', ['-V']).status === 0;

test('agrees with xxhsum', { skip: !hasXxhsum && 'xxhsum is not installed' }, () => {
  const rng = new Rng(3);
  for (const len of [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 31, 32, 33, 63, 64, 100, 1000]) {
    const input = new Uint8Array(len);
    for (let i = 0; i < len; i++) input[i] = rng.next() & 0xff;
    const r = spawnSync('xxhsum', ['-H64', '-'], { input: Buffer.from(input) });
    assert.equal(r.status, 0, String(r.stderr));
    const want = String(r.stdout).trim().split(/\s+/)[0];
    assert.equal(xxh64Hex(input), want, `length ${len}`);
  }
  for (const index of [2, 255, 65536, 50000, 4294967295]) {
    const be = Buffer.alloc(4);
    be.writeUInt32BE(index);
    const r = spawnSync('xxhsum', ['-H64', '-'], { input: be });
    assert.equal(makeKey(index).slice(0, 16), String(r.stdout).trim().split(/\s+/)[0]);
  }
});
