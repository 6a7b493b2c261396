// 'skv': the main-thread client. Same calls as 'skv/worker', as promises; the database runs in
// a module worker the client starts.
import type {
  Bytes, CommitOptions, Entry, ExportedFile, Mode, OpenOptions, RangeOptions, ReadOptions,
  ScanOptions, Stats,
} from './common.js';

export * from './common.js';

export interface ClientOpenOptions extends OpenOptions {
  /** A worker already running the package's web/src/server.js (default: start one). */
  worker?: Worker;
}

export declare function open(name: string, options?: ClientOpenOptions): Promise<Database>;
export declare function deleteDatabase(name: string): Promise<void>;
export declare function listDatabases(): Promise<string[]>;

export declare class Database {
  readonly name: string;
  /** Returns at once; the worker begins the transaction with its first request. */
  begin(mode?: Mode): Transaction;
  get(key: Bytes): Promise<Uint8Array | undefined>;
  get(key: Bytes, options: { as: 'string' }): Promise<string | undefined>;
  get(key: Bytes, options?: ReadOptions): Promise<Uint8Array | string | undefined>;
  set(key: Bytes, value: Bytes, options?: CommitOptions): Promise<void>;
  delete(key: Bytes, options?: CommitOptions): Promise<void>;
  scan(start?: Bytes, end?: Bytes, options?: ScanOptions): Promise<Array<Entry<any> | any>>;
  count(start?: Bytes, end?: Bytes): Promise<number>;
  flush(): Promise<void>;
  compact(): Promise<void>;
  stats(): Promise<Stats>;
  exportFiles(): Promise<ExportedFile[]>;
  /** Closes the database and stops the worker the client started. */
  close(): Promise<void>;
}

export declare class Transaction {
  readonly mode: Mode;
  /**
   * Queued and sent with the next request; settles when the worker has buffered the write. A
   * refused write (bad key or value) fails the whole transaction: later requests on it,
   * commit() included, reject with the same error.
   */
  set(key: Bytes, value: Bytes): Promise<void>;
  delete(key: Bytes): Promise<void>;
  get(key: Bytes): Promise<Uint8Array | undefined>;
  get(key: Bytes, options: { as: 'string' }): Promise<string | undefined>;
  get(key: Bytes, options?: ReadOptions): Promise<Uint8Array | string | undefined>;
  count(start?: Bytes, end?: Bytes): Promise<number>;
  range(start?: Bytes, end?: Bytes, options?: RangeOptions): AsyncIterableIterator<any>;
  scan(start?: Bytes, end?: Bytes, options?: ScanOptions): Promise<Array<Entry<any> | any>>;
  savepoint(): Promise<void>;
  rollbackToSavepoint(): Promise<void>;
  commit(options?: CommitOptions): Promise<void>;
  rollback(): Promise<void>;
}
