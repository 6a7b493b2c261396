// @ts-check
// Checks of every options object and number the API accepts. Both sides run them: the client
// before it sends anything (or starts a worker), the worker API before it calls into wasm (the
// glue checks numbers once more). A bad value is an SkvError 'invalid_argument' naming the option;
// it never gets truncated, wrapped or ignored. An option name the call does not know is refused
// too, so a misspelt option cannot silently fall back to its default.

import { SkvError, invalid } from './errors.js';

const MiB = 1 << 20;
const GiB = 1 << 30;
const MAX = Number.MAX_SAFE_INTEGER;

/** The largest timestamp (nanoseconds since the Unix epoch): 2^63 - 1, kMaxTimestamp in C++. */
export const MAX_TIMESTAMP = 0x7fffffffffffffffn;

/**
 * @typedef {{ kind: 'integer', min: number, max: number, infinity?: boolean }
 *   | { kind: 'boolean' } | { kind: 'enum', values: readonly string[] }
 *   | { kind: 'timestamp', min: number }
 *   | { kind: 'object', spec: Spec, orBoolean?: boolean }
 *   | { kind: 'custom', check: (value: unknown) => string | null }
 *   | { kind: 'secret', check: (value: unknown) => string | null }} Rule
 * @typedef {{ [name: string]: Rule }} Spec
 */

/**
 * @param {number} min
 * @param {number} max
 * @returns {Rule}
 */
const integer = (min, max) => ({ kind: 'integer', min, max });
/** @type {Rule} */
const boolean = { kind: 'boolean' };
/**
 * @param {...string} values
 * @returns {Rule}
 */
const oneOf = (...values) => ({ kind: 'enum', values });

const durability = oneOf('immediate', 'eventual');
const as = oneOf('bytes', 'string');

/** What the `versioning` option of open() holds. */
export const VERSIONING_OPTIONS = Object.freeze({
  enabled: boolean,
  retentionNs: /** @type {Rule} */ ({ kind: 'timestamp', min: 0 }),
});

/** What the `valueLog` option of open() holds (docs/vlog.md). */
export const VALUE_LOG_OPTIONS = Object.freeze({
  threshold: integer(1, 64 * MiB),
  maxFileSize: integer(4096, MAX),
  gcRatio: /** @type {Rule} */ ({
    kind: 'custom',
    check: (v) => (typeof v === 'number' && v > 0 && v <= 1 ? null : 'a number in (0, 1]'),
  }),
  cacheSize: integer(0, GiB),
});

/**
 * What a `key` must be, or null when it is one: a Uint8Array of exactly 32 bytes, or a string of
 * exactly 64 hex digits (either case).
 * @param {unknown} v
 * @returns {string | null}
 */
function checkKey(v) {
  if (v instanceof Uint8Array ? v.length === 32
    : typeof v === 'string' && /^[0-9a-fA-F]{64}$/.test(v)) {
    return null;
  }
  return 'a Uint8Array of 32 bytes or a string of 64 hex digits';
}

/**
 * What a secret value is, for messages: its type and length, never its contents.
 * @param {unknown} value
 * @returns {string}
 */
export function describeSecret(value) {
  try {
    if (typeof value === 'string') {
      return value.length === 64 ? 'a string with a character that is not a hex digit'
        : `a string of ${value.length} characters`;
    }
    if (value instanceof Uint8Array) return `a Uint8Array of ${value.length} bytes`;
    if (value === null || value === undefined || typeof value === 'boolean') return String(value);
    if (typeof value === 'object') {
      return Array.isArray(value) ? 'an array'
        : `an object (${Object.prototype.toString.call(value).slice(8, -1)})`;
    }
    return `a ${typeof value}`;
  } catch {
    return 'an object that cannot be read';
  }
}

/** What open() accepts (the worker API; the client adds `worker`). */
export const OPEN_OPTIONS = Object.freeze({
  createIfMissing: boolean,
  durability,
  waitForLock: boolean,
  reserveSlots: integer(1, 1024),
  maxSlots: integer(0, 1_000_000),
  openWithDamagedSlots: boolean,
  writeBufferBytes: integer(0, 64 * MiB),
  memtableSize: integer(4096, GiB),
  maxImmutableMemtables: integer(1, 64),
  blockSize: integer(256, 64 * MiB),
  blockCacheSize: integer(0, GiB),
  bloomBitsPerKey: integer(0, 64),
  levelBaseBytes: integer(64 << 10, MAX),
  targetFileSize: integer(64 << 10, MAX),
  compactionStepBytes: integer(0, MAX),
  l0CompactionTrigger: integer(1, 19),
  compression: oneOf('zstd', 'none'),
  compressionStartLevel: integer(1, 7),
  versioning: /** @type {Rule} */ ({ kind: 'object', spec: VERSIONING_OPTIONS }),
  // true (the default) or an object: on; false: values stay in the tables.
  valueLog: /** @type {Rule} */ ({ kind: 'object', spec: VALUE_LOG_OPTIONS, orBoolean: true }),
  key: /** @type {Rule} */ ({ kind: 'secret', check: checkKey }),
  keyId: integer(1, 0xffffffff),
});

/** What importFiles() accepts: the key of an encrypted set of files, to check them with. */
export const IMPORT_OPTIONS = Object.freeze({
  key: OPEN_OPTIONS.key,
  keyId: OPEN_OPTIONS.keyId,
});

/** Batches of the IndexedDB importer: records, and bytes of keys and values, per transaction. */
export const MAX_IMPORT_BATCH_BYTES = 64 * MiB;
const importBatch = Object.freeze({
  batchSize: integer(1, 1 << 16),
  batchBytes: integer(1, MAX_IMPORT_BATCH_BYTES),
});

/**
 * What importIndexedDB() accepts (the worker API; the client adds `worker`). `into` is checked
 * by the caller (a name, or an open Database of its own kind).
 */
export const IDB_IMPORT_OPTIONS = Object.freeze({
  into: /** @type {Rule} */ ({ kind: 'custom', check: () => null }),
  openOptions: /** @type {Rule} */ ({ kind: 'object', spec: OPEN_OPTIONS }),
  stores: /** @type {Rule} */ ({
    kind: 'custom',
    check: (v) => (Array.isArray(v) && v.every((s) => typeof s === 'string') &&
      new Set(v).size === v.length ? null : 'an array of distinct store names'),
  }),
  progress: /** @type {Rule} */ ({
    kind: 'custom',
    check: (v) => (typeof v === 'function' ? null : 'a function'),
  }),
  ...importBatch,
});

/** What importIndexedDBDump() accepts besides the destination (the client adds `worker`). */
export const DUMP_IMPORT_OPTIONS = Object.freeze({
  openOptions: IDB_IMPORT_OPTIONS.openOptions,
  ...importBatch,
});

export const COMMIT_OPTIONS = Object.freeze({ durability });
export const READ_OPTIONS = Object.freeze({ as });
/** The most entries one iterator step fetches. */
export const MAX_BATCH_SIZE = 1 << 16;
export const RANGE_OPTIONS = Object.freeze({
  as,
  reverse: boolean,
  keysOnly: boolean,
  batchSize: integer(1, MAX_BATCH_SIZE),
});
export const SCAN_OPTIONS = Object.freeze({
  ...RANGE_OPTIONS,
  offset: integer(0, MAX),
  limit: /** @type {Rule} */ ({ kind: 'integer', min: 0, max: MAX, infinity: true }),
});
export const TRANSACTION_OPTIONS = Object.freeze({ durability, retries: integer(0, 1000) });
export const HISTORY_OPTIONS = Object.freeze({
  as,
  includeTombstones: boolean,
  limit: /** @type {Rule} */ ({ kind: 'integer', min: 0, max: MAX, infinity: true }),
});

/**
 * Checks that `value` is an integer in [min, max]; returns it.
 * @param {unknown} value
 * @param {string} what
 * @param {number} min
 * @param {number} max
 * @returns {number}
 */
export function checkInteger(value, what, min, max) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${what} must be an integer from ${min} to ${max}, not ${describe(value)}`);
  }
  return value;
}

/**
 * What a timestamp must be, for messages.
 * @param {number} min
 */
function timestampRange(min) {
  return `a BigInt or a safe integer from ${min} to ${MAX_TIMESTAMP}`;
}

/**
 * Whether `value` is a timestamp from `min` to 2^63 - 1: a BigInt, or a Number that is a safe
 * integer (a larger Number may already have lost digits).
 * @param {unknown} value
 * @param {number} min
 */
function isTimestamp(value, min) {
  if (typeof value === 'bigint') return value >= BigInt(min) && value <= MAX_TIMESTAMP;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

/**
 * Checks a timestamp (nanoseconds since the Unix epoch) of call `what`; returns it as a BigInt.
 * Anything but a BigInt or a safe-integer Number from `min` to 2^63 - 1 is invalid_argument.
 * @param {unknown} value
 * @param {string} what  the call, for messages ("getAt", ...)
 * @param {number} [min]
 * @returns {bigint}
 */
export function checkTimestamp(value, what, min = 0) {
  if (!isTimestamp(value, min)) {
    throw invalid(`${what}: the timestamp must be ${timestampRange(min)}, not ` +
      `${describe(value)}`);
  }
  return BigInt(/** @type {bigint | number} */ (value));
}

/**
 * Checks an options object against `spec`: undefined is no options; anything but a plain object
 * is refused, and so is an unknown name or a bad value. Returns a new plain object holding the
 * values it checked (so a getter is read once, and what is used is what was checked); an object
 * that throws while it is read (a getter, a Proxy) is refused like a bad value.
 * @template {object} T
 * @param {T | undefined} options
 * @param {Spec} spec
 * @param {string} what  the call, for messages ("open", "scan", ...)
 * @returns {T}
 */
export function checkOptions(options, spec, what) {
  if (options === undefined) return /** @type {T} */ ({});
  /** @type {Array<[string, unknown]>} */
  let entries;
  try {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw invalid(`${what}: options must be an object, not ${describe(options)}`);
    }
    entries = Object.entries(options);
  } catch (e) {
    if (e instanceof SkvError) throw e;
    throw invalid(`${what}: the options could not be read: ${errorText(e)}`);
  }
  /** @type {Record<string, unknown>} */
  const checked = {};
  for (const [name, value] of entries) {
    const rule = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (rule === undefined) {
      throw invalid(`${what}: unknown option ${JSON.stringify(name)} (known: ` +
        `${Object.keys(spec).join(', ')})`);
    }
    if (value === undefined) continue;
    if (rule.kind === 'object') {
      if (rule.orBoolean && typeof value === 'boolean') {
        checked[name] = value;
        continue;
      }
      if (rule.orBoolean && (value === null || typeof value !== 'object' || Array.isArray(value))) {
        throw invalid(`${what}: option ${name} must be true, false or an object, not ` +
          `${describe(value)}`);
      }
      checked[name] = checkOptions(/** @type {object} */ (value), rule.spec,
        `${what}: option ${name}`);
      continue;
    }
    let problem;
    try {
      problem = checkRule(rule, value);
    } catch (e) {
      problem = `valid (checking it threw ${errorText(e)})`;
    }
    if (problem) {
      const shown = rule.kind === 'secret' ? describeSecret(value) : describe(value);
      throw invalid(`${what}: option ${name} must be ${problem}, not ${shown}`);
    }
    checked[name] = value;
  }
  if (Object.hasOwn(spec, 'keyId') && checked.keyId !== undefined && checked.key === undefined) {
    throw invalid(`${what}: option keyId needs option key`);
  }
  return /** @type {T} */ (checked);
}

/**
 * @param {Rule} rule
 * @param {unknown} value
 * @returns {string | null} what the value must be, when it is not
 */
function checkRule(rule, value) {
  switch (rule.kind) {
    case 'integer': {
      if (rule.infinity && value === Infinity) return null;
      const ok = typeof value === 'number' && Number.isInteger(value) && value >= rule.min &&
        value <= rule.max;
      return ok ? null : `an integer from ${rule.min} to ${rule.max}` +
        (rule.infinity ? ' (or Infinity)' : '');
    }
    case 'boolean':
      return typeof value === 'boolean' ? null : 'true or false';
    case 'timestamp':
      return isTimestamp(value, rule.min) ? null : timestampRange(rule.min);
    case 'enum':
      return typeof value === 'string' && rule.values.includes(value) ? null
        : rule.values.map((v) => `'${v}'`).join(' or ');
    case 'custom':
    case 'secret':
      return rule.check(value);
    default:
      return 'valid';
  }
}

/**
 * A short description of a value for messages (never throws).
 * @param {unknown} value
 * @returns {string}
 */
export function describe(value) {
  try {
    if (value === null) return 'null';
    if (typeof value === 'string') {
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
    }
    if (typeof value === 'number' || typeof value === 'boolean' || value === undefined) {
      return String(value);
    }
    if (typeof value === 'bigint') return `${value}n`;
    if (typeof value === 'symbol') return 'a symbol';
    if (typeof value === 'function') return 'a function';
    if (Array.isArray(value)) return 'an array';
    return `an object (${Object.prototype.toString.call(value).slice(8, -1)})`;
  } catch {
    return 'an object that cannot be read';
  }
}

/**
 * An exception's name and message for messages (never throws).
 * @param {unknown} e
 * @returns {string}
 */
export function errorText(e) {
  try {
    const err = /** @type {any} */ (e);
    return `${String(err?.name ?? 'Error')}: ${String(err?.message ?? err)}`;
  } catch {
    return 'an exception that cannot be read';
  }
}
