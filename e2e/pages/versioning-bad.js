// Bad input for the versioned calls, run the same way through both APIs (the client from the
// page, the worker API in versioning-worker.js): every call is awaited inside a try, so a
// synchronous throw and a rejection read the same. Each refusal is recorded as
// { code, named } (named: the message shows the value as given), and the tests compare them.

export const MAX_TIMESTAMP = 0x7fffffffffffffffn;

// [what, value, how the message shows it]
export function badTimestamps() {
  return [
    ['-1', -1, 'not -1'],
    ['-1n', -1n, 'not -1n'],
    ['1.5', 1.5, 'not 1.5'],
    ['NaN', NaN, 'not NaN'],
    ['Infinity', Infinity, 'not Infinity'],
    ['2^53', 2 ** 53, 'not 9007199254740992'],
    ['2^63', 2n ** 63n, 'not 9223372036854775808n'],
    ['2^64 - 1', 2n ** 64n - 1n, 'not 18446744073709551615n'],
    ['a string', '5', 'not "5"'],
    ['null', null, 'not null'],
    ['undefined', undefined, 'not undefined'],
    ['an object', { valueOf: () => 5 }, 'not an object'],
    ['an array', [5], 'not an array'],
    ['a boolean', true, 'not true'],
  ];
}

// Open options the versioning option refuses: [what, options, how the message shows it].
export function badVersioningOptions() {
  return [
    ['a number', { versioning: 5 }, 'not 5'],
    ['true', { versioning: true }, 'not true'],
    ['null', { versioning: null }, 'not null'],
    ['an array', { versioning: [] }, 'not an array'],
    ['retention -1n', { versioning: { retentionNs: -1n } }, 'not -1n'],
    ['retention 1.5', { versioning: { retentionNs: 1.5 } }, 'not 1.5'],
    ['retention 2^63', { versioning: { retentionNs: 2n ** 63n } }, 'not 9223372036854775808n'],
    ['retention a string', { versioning: { retentionNs: '0' } }, 'not "0"'],
    ['enabled a string', { versioning: { enabled: 'yes' } }, 'not "yes"'],
    ['an unknown name', { versioning: { retention: 0n } }, 'unknown option "retention"'],
    ['a getter that throws', { versioning: { get retentionNs() { throw new Error('boom'); } } },
      'boom'],
  ];
}

async function result(fn) {
  try {
    const r = await fn();
    return { code: 'ok', result: r };
  } catch (e) {
    return { code: e && e.name === 'SkvError' ? e.code : `${e && e.name}: ${e && e.message}`,
      message: String(e && e.message) };
  }
}

// Drains an iterator (the client's fails on its first next(), the worker API's when made).
async function drain(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}

/**
 * Every refusal on `db` (versioned, holding 'doc') and `plain` (not versioned). Returns
 * { [what]: { code, named } } for the refusals, and `accepted` for the edge values that must
 * work.
 */
export async function refusals(db, plain) {
  const out = {};
  const note = async (what, shown, fn) => {
    const r = await result(fn);
    out[what] = { code: r.code, named: shown === null || (r.message || '').includes(shown) };
  };
  for (const [what, ts, shown] of badTimestamps()) {
    await note(`getAt ${what}`, shown, () => db.getAt('doc', ts));
    await note(`setAt ${what}`, shown, () => db.setAt('bad', 'x', ts));
    await note(`rangeAt ${what}`, shown, () => drain(db.rangeAt(undefined, undefined, ts)));
    await note(`scanAt ${what}`, shown, () => db.scanAt(undefined, undefined, ts));
    await note(`tx.rangeAt ${what}`, shown, async () => {
      const tx = db.begin('readonly');
      try {
        return await drain(tx.rangeAt('a', 'z', ts));
      } finally {
        await tx.rollback();
      }
    });
    // A transaction's setAt: the write itself fails with the error (the client also fails the
    // transaction, so its commit does too; the worker API's stays usable and commits nothing).
    await note(`tx.setAt ${what}`, shown, async () => {
      const tx = db.begin();
      try {
        await tx.setAt('bad', 'x', ts);
      } finally {
        await tx.commit().catch(() => {});
      }
    });
  }
  await note('setAt 0', 'from 1 to', () => db.setAt('bad', 'x', 0));
  await note('setAt 0n', 'not 0n', () => db.setAt('bad', 'x', 0n));
  for (const [what, options, shown] of [
    ['limit -1', { limit: -1 }, 'not -1'],
    ['limit 1.5', { limit: 1.5 }, 'not 1.5'],
    ['limit a BigInt', { limit: 5n }, 'not 5n'],
    ['includeTombstones 1', { includeTombstones: 1 }, 'not 1'],
    ['as hex', { as: 'hex' }, 'not "hex"'],
    ['an unknown option', { reverse: true }, 'unknown option "reverse"'],
  ]) {
    await note(`history ${what}`, shown, () => db.history('doc', options));
  }
  await note('history of an empty key', null, () => db.history(''));
  await note('history of a number', 'not 5', () => db.history(5));
  await note('rangeAt reverse "yes"', 'not "yes"',
    () => drain(db.rangeAt(undefined, undefined, 5n, { reverse: 'yes' })));
  await note('getAt as hex', 'not "hex"', () => db.getAt('doc', 5n, { as: 'hex' }));

  // On a database without versioning: the C++ code's name.
  const plainCalls = {
    setAt: () => plain.setAt('k', 'v', 5n),
    getAt: () => plain.getAt('k', 5n),
    history: () => plain.history('k'),
    rangeAt: () => drain(plain.rangeAt(undefined, undefined, 5n)),
    scanAt: () => plain.scanAt(undefined, undefined, 5n),
    'tx.setAt then commit': async () => {
      const tx = plain.begin();
      tx.setAt('k', 'v', 5n);
      return tx.commit();
    },
  };
  for (const [what, fn] of Object.entries(plainCalls)) await note(`unversioned ${what}`, null, fn);

  // Nothing refused was written, and the edges of the range work.
  const accepted = {
    bad: (await db.history('bad', { includeTombstones: true })).length,
    plainCount: await plain.count(),
    plainVersioning: await result(async () => {
      const v = await plain.versioning();
      return `${v.enabled} ${v.retentionNs}`;
    }),
    getAtMax: await result(async () => typeof (await db.getAt('doc', MAX_TIMESTAMP))),
    getAtSafe: await result(async () => typeof (await db.getAt('doc', Number.MAX_SAFE_INTEGER))),
    getAt0: await result(async () => String(await db.getAt('doc', 0))),
    setAtMax: await result(() => db.setAt('edge', 'max', MAX_TIMESTAMP)),
    setAt1: await result(() => db.setAt('edge', 'one', 1)),
    edgeHistory: await result(async () =>
      (await db.history('edge', { as: 'string' })).map((v) => `${v.timestamp} ${v.value}`)),
    historyLimit0: await result(async () => (await db.history('doc', { limit: 0 })).length),
    historyInfinity: await result(async () =>
      (await db.history('doc', { limit: Infinity })).length),
  };
  return { out, accepted };
}
