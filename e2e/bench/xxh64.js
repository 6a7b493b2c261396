// XXH64 (the 64-bit xxHash) over BigInt, for the benchmark's "string26" keys. Slow next to a
// native hash (a few microseconds per short input), which does not matter: keys are made before
// an operation's timer starts. Runs in the browser and in Node (xxh64.test.mjs checks it
// against the reference vectors and, if installed, the xxhsum tool).

const MASK = (1n << 64n) - 1n;
const P1 = 11400714785074694791n;
const P2 = 14029467366897019727n;
const P3 = 1609587929392839161n;
const P4 = 9650029242287828579n;
const P5 = 2870177450012600261n;

const rotl = (x, r) => ((x << BigInt(r)) | (x >> BigInt(64 - r))) & MASK;

function u64le(b, i) {
  let v = 0n;
  for (let j = 7; j >= 0; j--) v = (v << 8n) | BigInt(b[i + j]);
  return v;
}

function u32le(b, i) {
  return BigInt((b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0);
}

function round(acc, lane) {
  acc = (acc + lane * P2) & MASK;
  return (rotl(acc, 31) * P1) & MASK;
}

function mergeRound(h, v) {
  h ^= round(0n, v);
  return (h * P1 + P4) & MASK;
}

// XXH64 of the bytes `b` (a Uint8Array) with `seed` (a BigInt), as a BigInt.
export function xxh64(b, seed = 0n) {
  const len = b.length;
  let i = 0;
  let h;
  if (len >= 32) {
    let v1 = (seed + P1 + P2) & MASK;
    let v2 = (seed + P2) & MASK;
    let v3 = seed & MASK;
    let v4 = (seed - P1) & MASK;
    for (; i + 32 <= len; i += 32) {
      v1 = round(v1, u64le(b, i));
      v2 = round(v2, u64le(b, i + 8));
      v3 = round(v3, u64le(b, i + 16));
      v4 = round(v4, u64le(b, i + 24));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) & MASK;
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = (seed + P5) & MASK;
  }
  h = (h + BigInt(len)) & MASK;
  for (; i + 8 <= len; i += 8) {
    h ^= round(0n, u64le(b, i));
    h = (rotl(h, 27) * P1 + P4) & MASK;
  }
  if (i + 4 <= len) {
    h ^= (u32le(b, i) * P1) & MASK;
    h = (rotl(h, 23) * P2 + P3) & MASK;
    i += 4;
  }
  for (; i < len; i++) {
    h ^= (BigInt(b[i]) * P5) & MASK;
    h = (rotl(h, 11) * P1) & MASK;
  }
  h ^= h >> 33n;
  h = (h * P2) & MASK;
  h ^= h >> 29n;
  h = (h * P3) & MASK;
  h ^= h >> 32n;
  return h;
}

// The lower-case, zero-padded 16-digit hex of xxh64(b, seed).
export function xxh64Hex(b, seed = 0n) {
  return xxh64(b, seed).toString(16).padStart(16, '0');
}
