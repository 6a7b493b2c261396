// Value log options the package must refuse with invalid_argument, shared by the page and the
// worker side of tests/value-log.mjs: [what, open options, what the message must show, what
// the wasm glue answers when handed the options straight]. The glue reads only the names it
// knows, and null is no option, so those two reach the (missing) database: not_found.
export function badValueLogOptions() {
  const throwing = {};
  Object.defineProperty(throwing, 'threshold', {
    enumerable: true,
    get() {
      throw new Error('the getter refuses');
    },
  });
  return [
    ['a number', { valueLog: 5 }, 'not 5'],
    ['a BigInt', { valueLog: 1n }, 'not 1n'],
    ['null', { valueLog: null }, 'not null', 'not_found'],
    ['an array', { valueLog: [] }, 'not an array'],
    ['a string', { valueLog: 'on' }, 'not "on"'],
    ['threshold 0', { valueLog: { threshold: 0 } }, 'not 0'],
    ['threshold 64 MiB + 1', { valueLog: { threshold: 2 ** 26 + 1 } }, 'not 67108865'],
    ['threshold 2^32', { valueLog: { threshold: 2 ** 32 } }, 'not 4294967296'],
    ['threshold 1.5', { valueLog: { threshold: 1.5 } }, 'not 1.5'],
    ['threshold a string', { valueLog: { threshold: '256' } }, 'not "256"'],
    ['threshold a BigInt', { valueLog: { threshold: 256n } }, 'not 256n'],
    ['maxFileSize 4095', { valueLog: { maxFileSize: 4095 } }, 'not 4095'],
    ['maxFileSize 2^53', { valueLog: { maxFileSize: 2 ** 53 } }, 'not 9007199254740992'],
    ['maxFileSize NaN', { valueLog: { maxFileSize: NaN } }, 'not NaN'],
    ['gcRatio 0', { valueLog: { gcRatio: 0 } }, 'not 0'],
    ['gcRatio 1.5', { valueLog: { gcRatio: 1.5 } }, 'not 1.5'],
    ['gcRatio -0.25', { valueLog: { gcRatio: -0.25 } }, 'not -0.25'],
    ['gcRatio NaN', { valueLog: { gcRatio: NaN } }, 'not NaN'],
    ['gcRatio Infinity', { valueLog: { gcRatio: Infinity } }, 'not Infinity'],
    ['gcRatio a string', { valueLog: { gcRatio: '0.5' } }, 'not "0.5"'],
    ['cacheSize -1', { valueLog: { cacheSize: -1 } }, 'not -1'],
    ['cacheSize 2^32', { valueLog: { cacheSize: 2 ** 32 } }, 'not 4294967296'],
    ['an unknown name', { valueLog: { thresholdBytes: 256 } }, 'unknown option "thresholdBytes"',
      'not_found'],
    ['a getter that throws', { valueLog: throwing }, 'the getter refuses'],
  ];
}

/** Edge values every boundary must accept (the browser's default is on). */
export function goodValueLogOptions() {
  return [
    ['default', {}],
    ['on', { valueLog: true }],
    ['off', { valueLog: false }],
    ['empty', { valueLog: {} }],
    ['smallest', { valueLog: { threshold: 1, maxFileSize: 4096, gcRatio: Number.MIN_VALUE,
      cacheSize: 0 } }],
    ['largest', { valueLog: { threshold: 2 ** 26, maxFileSize: 2 ** 53 - 1, gcRatio: 1,
      cacheSize: 2 ** 30 } }],
  ];
}
