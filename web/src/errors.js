// @ts-check
// SkvError: every failure the package reports. `code` is stable and names the engine's error kind,
// the same names the C++ core uses (Code in core/include/skv/status.h):
//
//   not_found, conflict, read_only, closed, invalid_argument, corruption, io, quota, busy,
//   encryption, not_supported
//
// A conflict means another transaction committed a write to one of this transaction's keys
// first: retry with a new transaction. quota means the browser's storage quota or the slot pool
// ran out. busy means another tab or worker has the database open. An SkvError that wraps another
// error (a DOMException from OPFS, say) keeps it as `cause`.

/** @typedef {import('../types/common.js').ErrorCode} ErrorCode */

/** @type {readonly ErrorCode[]} */
export const ERROR_CODES = Object.freeze([
  'not_found', 'conflict', 'read_only', 'closed', 'invalid_argument', 'corruption', 'io', 'quota',
  'busy', 'encryption', 'not_supported',
]);

/**
 * The part of an error that survives postMessage.
 * @typedef {{ code: ErrorCode, message: string, cause?: { name: string, message: string } }} PlainError
 */

export class SkvError extends Error {
  /** @type {'SkvError'} */
  name = 'SkvError';
  /** @type {ErrorCode} */
  code;

  /**
   * @param {ErrorCode} code
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
  }

  // A plain object that survives postMessage (Error subclasses lose their class on the way; the
  // cause keeps its name and message).
  /** @returns {PlainError} */
  toJSON() {
    /** @type {PlainError} */
    const plain = { code: this.code, message: this.message };
    const cause = /** @type {any} */ (this.cause);
    if (cause !== undefined) {
      plain.cause = { name: String(cause?.name ?? 'Error'), message: String(cause?.message ?? cause) };
    }
    return plain;
  }

  /** @param {PlainError} plain */
  static from(plain) {
    if (!plain.cause) return new SkvError(plain.code, plain.message);
    const cause = new Error(plain.cause.message);
    cause.name = plain.cause.name;
    return new SkvError(plain.code, plain.message, { cause });
  }
}

/**
 * Wraps anything thrown into an SkvError that keeps it as `cause` (a QuotaExceededError becomes
 * `quota`, anything else `io`).
 * @param {unknown} e
 * @returns {SkvError}
 */
export function asSkvError(e) {
  if (e instanceof SkvError) return e;
  const err = /** @type {any} */ (e);
  const name = err && err.name ? String(err.name) : 'Error';
  const message = err && err.message !== undefined ? String(err.message) : String(e);
  const code = name === 'QuotaExceededError' ? 'quota' : 'io';
  return new SkvError(code, `${name}: ${message}`, { cause: e });
}

/**
 * An invalid_argument error.
 * @param {string} message
 */
export function invalid(message) {
  return new SkvError('invalid_argument', message);
}

/**
 * A promise rejected with `e` that counts as handled: a caller who never awaits it gets no
 * unhandled-rejection report, one who does still sees the error.
 * @template T
 * @param {unknown} e
 * @returns {Promise<T>}
 */
export function quietRejection(e) {
  const p = Promise.reject(e);
  p.catch(() => {});
  return p;
}
