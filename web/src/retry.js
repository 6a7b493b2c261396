// @ts-check
// db.transaction(fn, options), shared by both APIs: begins a read-write transaction, runs
// `fn(tx)`, commits, and returns what `fn` returned. When the commit (or `fn`) fails with
// `conflict`, the whole attempt runs again in a new transaction, up to `retries` more times
// (default 3); any other failure rolls the transaction back and is thrown as it is. `fn` must not
// commit or roll back the transaction itself, and it may run more than once.

import { SkvError, invalid } from './errors.js';
import { checkOptions, describe, TRANSACTION_OPTIONS } from './options.js';

export const DEFAULT_RETRIES = 3;

/**
 * @typedef {{ commit(options?: { durability?: 'immediate' | 'eventual' }): Promise<void>,
 *   rollback(): unknown }} Committable
 */

/**
 * @template {Committable} Tx
 * @template T
 * @param {() => Tx} begin
 * @param {(tx: Tx) => T | PromiseLike<T>} fn
 * @param {{ retries?: number, durability?: 'immediate' | 'eventual' } | undefined} options
 * @returns {Promise<Awaited<T>>}
 */
export async function runTransaction(begin, fn, options) {
  const { retries = DEFAULT_RETRIES, durability } =
    checkOptions(options, TRANSACTION_OPTIONS, 'transaction');
  if (typeof fn !== 'function') {
    throw invalid(`transaction: the callback must be a function, not ${describe(fn)}`);
  }
  const commitOptions = durability === undefined ? undefined : { durability };
  for (let attempt = 0; ; attempt++) {
    const tx = begin();
    let result;
    try {
      result = await fn(tx);
    } catch (e) {
      await tx.rollback();
      if (isConflict(e) && attempt < retries) continue;
      throw e;
    }
    try {
      await tx.commit(commitOptions);
      return result;
    } catch (e) {
      if (isConflict(e) && attempt < retries) continue;
      throw e;
    }
  }
}

/** @param {unknown} e */
function isConflict(e) {
  return e instanceof SkvError && e.code === 'conflict';
}
