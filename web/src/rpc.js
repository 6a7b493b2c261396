// @ts-check
// Rpc: the client's channel to its worker (server.js). Requests made in one turn of the event
// loop travel in one message, with their buffers transferred; each request's promise settles
// with its reply. When the worker dies every pending and later request rejects with the cause.

import { SkvError } from './errors.js';

/** @typedef {{ resolve: (v: any) => void, reject: (e: unknown) => void }} Call */

export class Rpc {
  /** @type {Worker} */ #worker;
  #nextId = 1;
  /** @type {Map<number, Call>} */ #calls = new Map();
  /** @type {Array<{ id: number, op: string, args: unknown[] }>} */ #outbox = [];
  /** @type {Transferable[]} */ #transfer = [];
  #scheduled = false;
  /** @type {SkvError | null} */ #dead = null;

  /** @param {Worker} worker */
  constructor(worker) {
    this.#worker = worker;
    worker.onmessage = (event) => {
      for (const { id, ok, result, error } of event.data.batch) {
        const call = this.#calls.get(id);
        if (!call) continue;
        this.#calls.delete(id);
        if (ok) call.resolve(result);
        else call.reject(SkvError.from(error));
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.#fail(new SkvError('io', `the skv worker failed: ${event.message || 'unknown error'}`));
    };
  }

  /** The error every call gets once the worker is gone, or null. */
  get dead() {
    return this.#dead;
  }

  /** A fresh id for a transaction or an iterator. */
  newId() {
    return this.#nextId++;
  }

  /**
   * Sends request `op` with the next message; resolves with its result.
   * @param {string} op
   * @param {unknown[]} args
   * @param {Transferable[]} [transfer]
   * @returns {Promise<any>}
   */
  call(op, args, transfer = []) {
    if (this.#dead) return Promise.reject(this.#dead);
    const id = this.newId();
    const p = new Promise((resolve, reject) => this.#calls.set(id, { resolve, reject }));
    this.#outbox.push({ id, op, args });
    this.#transfer.push(...transfer);
    if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => this.#send());
    }
    return p;
  }

  /**
   * Sends without waiting for the outcome (a failure shows on the next call that depends on
   * it).
   * @param {string} op
   * @param {unknown[]} args
   */
  post(op, args) {
    this.call(op, args).catch(() => {});
  }

  #send() {
    this.#scheduled = false;
    const batch = this.#outbox.splice(0);
    const transfer = this.#transfer.splice(0);
    if (batch.length) this.#worker.postMessage({ batch }, transfer);
  }

  /** @param {SkvError} error */
  #fail(error) {
    this.#dead = error;
    for (const { reject } of this.#calls.values()) reject(error);
    this.#calls.clear();
  }

  terminate() {
    this.#worker.terminate();
    this.#fail(new SkvError('closed', 'the database is closed'));
  }
}
