// 'skv/worker': the synchronous API, for code running in a dedicated worker.
import type {
  Bytes, CommitOptions, Entry, ExportedFile, Mode, OpenOptions, RangeOptions, ReadOptions,
  ScanOptions, Stats,
} from './common.js';

export * from './common.js';

export declare function open(name: string, options?: OpenOptions): Promise<Database>;
export declare function deleteDatabase(name: string): Promise<void>;
export declare function listDatabases(): Promise<string[]>;

export declare class Database {
  readonly name: string;
  begin(mode?: Mode): Transaction;
  get(key: Bytes): Uint8Array | undefined;
  get(key: Bytes, options: { as: 'string' }): string | undefined;
  get(key: Bytes, options?: ReadOptions): Uint8Array | string | undefined;
  set(key: Bytes, value: Bytes, options?: CommitOptions): Promise<void>;
  delete(key: Bytes, options?: CommitOptions): Promise<void>;
  scan(start?: Bytes, end?: Bytes, options?: ScanOptions): Array<Entry<any> | any>;
  count(start?: Bytes, end?: Bytes): number;
  flush(): Promise<void>;
  compact(): Promise<void>;
  stats(): Stats;
  exportFiles(): ExportedFile[];
  close(): Promise<void>;
}

export declare class Transaction {
  readonly mode: Mode;
  set(key: Bytes, value: Bytes): void;
  delete(key: Bytes): void;
  get(key: Bytes): Uint8Array | undefined;
  get(key: Bytes, options: { as: 'string' }): string | undefined;
  get(key: Bytes, options?: ReadOptions): Uint8Array | string | undefined;
  count(start?: Bytes, end?: Bytes): number;
  range(start?: Bytes, end?: Bytes, options?: RangeOptions): RangeIterator;
  /** Entries as [key, value] pairs, or keys with keysOnly. */
  scan(start?: Bytes, end?: Bytes, options?: ScanOptions): Array<Entry<any> | any>;
  savepoint(): void;
  rollbackToSavepoint(): void;
  commit(options?: CommitOptions): Promise<void>;
  rollback(): void;
}

export declare class RangeIterator
  implements IterableIterator<any>, AsyncIterable<any> {
  next(): IteratorResult<any>;
  return(): IteratorResult<any>;
  skip(n: number): number;
  take(n: number): any[];
  close(): void;
  [Symbol.iterator](): RangeIterator;
  [Symbol.asyncIterator](): AsyncIterator<any>;
}
