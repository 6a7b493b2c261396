// @ts-check
// SkvError: every failure the package reports. `code` is stable and names the engine's error kind,
// the same names the C++ core uses (Code in core/include/skv/status.h):
//
//   not_found, conflict, read_only, closed, invalid_argument, corruption, io, quota, busy,
//   encryption, not_supported
//
// A conflict means another transaction committed a write to one of this transaction's keys
// first: retry with a new transaction. quota means the browser's storage quota or the slot pool
// ran out. busy means another tab or worker has the database open. An `encryption` error names its
// sub-kind in `reason`: wrong_key, unknown_key_id, key_retired, not_configured (an encrypted
// database opened without `key`) or not_encrypted (`key` given for a plaintext database). The
// IndexedDB importer's refusals carry a `reason` too (ImportReason in web/types/common.d.ts:
// bad_magic, source_mismatch, unsupported_value, ...). An
// SkvError that wraps another error (a DOMException from OPFS, say) keeps it as `cause`.

/** @typedef {import('../types/common.js').ErrorCode} ErrorCode */

/** @type {readonly ErrorCode[]} */
export const ERROR_CODES = Object.freeze([
  'not_found', 'conflict', 'read_only', 'closed', 'invalid_argument', 'corruption', 'io', 'quota',
  'busy', 'encryption', 'not_supported',
]);

/**
 * The part of an error that survives postMessage.
 * @typedef {import('../types/common.js').EncryptionReason} EncryptionReason
 * @typedef {import('../types/common.js').ErrorReason} ErrorReason
 * @typedef {{ code: ErrorCode, message: string, reason?: ErrorReason,
 *   cause?: { name: string, message: string } }} PlainError
 */

/** @type {readonly EncryptionReason[]} */
export const ENCRYPTION_REASONS = Object.freeze([
  'wrong_key', 'unknown_key_id', 'key_retired', 'not_configured', 'not_encrypted',
]);

export class SkvError extends Error {
  /** @type {'SkvError'} */
  name = 'SkvError';
  /** @type {ErrorCode} */
  code;
  /**
   * @type {ErrorReason | undefined} for code 'encryption': the sub-kind; for an error of the
   *   IndexedDB importer: which one (docs/indexeddb.md)
   */
  reason;

  /**
   * @param {ErrorCode} code
   * @param {string} message
   * @param {{ cause?: unknown, reason?: ErrorReason }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
    if (options && options.reason !== undefined) this.reason = options.reason;
  }

  // A plain object that survives postMessage (Error subclasses lose their class on the way; the
  // cause keeps its name and message).
  /** @returns {PlainError} */
  toJSON() {
    /** @type {PlainError} */
    const plain = { code: this.code, message: this.message };
    if (this.reason !== undefined) plain.reason = this.reason;
    const cause = /** @type {any} */ (this.cause);
    if (cause !== undefined) {
      plain.cause = { name: String(cause?.name ?? 'Error'), message: String(cause?.message ?? cause) };
    }
    return plain;
  }

  /** @param {PlainError} plain */
  static from(plain) {
    const reason = plain.reason;
    if (!plain.cause) return new SkvError(plain.code, plain.message, { reason });
    const cause = new Error(plain.cause.message);
    cause.name = plain.cause.name;
    return new SkvError(plain.code, plain.message, { cause, reason });
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
 * The glue's error reason ("" for none) as an SkvError option.
 * @param {string} reason
 * @returns {EncryptionReason | undefined}
 */
export function reasonOf(reason) {
  return (/** @type {readonly string[]} */ (ENCRYPTION_REASONS)).includes(reason)
    ? /** @type {EncryptionReason} */ (reason) : undefined;
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
