// 'skv/worker': the synchronous API, for code running in a dedicated worker. Synchronous calls
// throw an SkvError; calls that return a promise reject with one and never throw.
import type {
  DumpImportOptions, DumpImportResult, IndexedDBDump, IndexedDBImportOptionsBase,
  IndexedDBImportProgress,
  Bytes, CommitOptions, Decoded, ExportedFile, HistoryOptions, ImportedFile, ImportOptions, KeyVersion,
  Mode, OpenOptions,
  RangeEntry, RangeOptions, ReadOptions, ScanOptions, Stats, Timestamp, TransactionOptions,
  Versioning,
} from './common.js';

export * from './common.js';

export declare function open(name: string, options?: OpenOptions): Promise<Database>;
/**
 * Removes the database's slot files, and its directory unless it holds entries skv did not
 * make (those are left alone). `busy` while the database is open anywhere.
 */
export declare function deleteDatabase(name: string): Promise<void>;
/** The names of the directories under skv/ that hold a database's slot files. */
export declare function listDatabases(): Promise<string[]>;
/**
 * Makes database `name` from `files`, the opposite of exportFiles(): a directory the native skv
 * tool wrote, or another database's export. `name` must not exist (invalid_argument "already
 * exists"; busy while open or locked). Every name is checked (only the names the core writes;
 * CURRENT required), the files are written, CURRENT last, and the database is opened once,
 * read-only, with `options`, and every live file read and checked: a damaged or incomplete set
 * is refused with the core's error and leaves no database. Resolves once it is durable.
 */
export declare function importFiles(name: string, files: ReadonlyArray<ImportedFile>,
  options?: ImportOptions): Promise<void>;

export interface IndexedDBImportOptions extends IndexedDBImportOptionsBase {
  /**
   * The destination: a database name (opened, created if missing unless `openOptions` say
   * otherwise, and closed at the end), or a Database open in this worker.
   */
  into: string | Database;
}

/**
 * Imports IndexedDB database `source` of this origin into an skv database, reading it here in
 * the worker (docs/indexeddb.md); as the client's importIndexedDB().
 */
export declare function importIndexedDB(source: string, options: IndexedDBImportOptions):
  Promise<IndexedDBImportProgress>;

/** Imports an INDXDB01 dump file; as the client's importIndexedDBDump(). */
export declare function importIndexedDBDump(dump: IndexedDBDump, into: string | Database,
  options?: DumpImportOptions): Promise<DumpImportResult>;

export declare class Database {
  private constructor();
  readonly name: string;
  begin(mode?: Mode): Transaction;
  get<O extends ReadOptions = {}>(key: Bytes, options?: O): Decoded<O> | undefined;
  set(key: Bytes, value: Bytes, options?: CommitOptions): Promise<void>;
  delete(key: Bytes, options?: CommitOptions): Promise<void>;
  scan<O extends ScanOptions = {}>(start?: Bytes, end?: Bytes, options?: O): Array<RangeEntry<O>>;
  /**
   * Iterates [start, end) in a read-only transaction of its own, which ends with the loop
   * (exhausted, broken out of, closed, or failed).
   */
  range<O extends RangeOptions = {}>(start?: Bytes, end?: Bytes, options?: O):
    RangeIterator<RangeEntry<O>>;
  count(start?: Bytes, end?: Bytes): number;
  /**
   * Versioned queries need a database opened or created with versioning; on any other they
   * fail with not_supported. Timestamps are nanoseconds since the Unix epoch (Timestamp).
   * setAt writes `value` stamped with `timestamp` (1 to 2^63 - 1), in a transaction of its own.
   */
  setAt(key: Bytes, value: Bytes, timestamp: Timestamp, options?: CommitOptions): Promise<void>;
  /** The value of `key` as of `timestamp` (its newest version at or before it). */
  getAt<O extends ReadOptions = {}>(key: Bytes, timestamp: Timestamp, options?: O):
    Decoded<O> | undefined;
  /** Every version of `key`, newest first. */
  history<O extends HistoryOptions = {}>(key: Bytes, options?: O):
    Array<KeyVersion<Decoded<O>>>;
  /** As range(), over the database as it was at `timestamp`: each key with its version then. */
  rangeAt<O extends RangeOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): RangeIterator<RangeEntry<O>>;
  /** As scan(), over the database as it was at `timestamp`. */
  scanAt<O extends ScanOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): Array<RangeEntry<O>>;
  /** Whether the database is versioned and its retention, as stored in it. */
  versioning(): Versioning;
  /**
   * Runs `fn` in a read-write transaction, commits it, and returns what `fn` returned. On a
   * conflict the whole transaction runs again, up to `retries` times (default 3).
   */
  transaction<T>(fn: (tx: Transaction) => T | PromiseLike<T>, options?: TransactionOptions):
    Promise<Awaited<T>>;
  flush(): Promise<void>;
  compact(): Promise<void>;
  /**
   * Rewrites the value log files whose garbage share reaches `valueLog.gcRatio` and removes the
   * files nothing points into any more; runs to completion (like compact()). Does nothing on a
   * database that never used the value log.
   */
  collectVlogGarbage(): Promise<void>;
  stats(): Stats;
  exportFiles(): ExportedFile[];
  /**
   * Writes a consistent copy of this database into the new database `target` while this one
   * stays open and in use: every commit acknowledged before the call and a prefix (in commit
   * order) of the ones made during it, the same stored options, sealed like this one when it is
   * encrypted (it then opens with the same key only). `target` must not exist (invalid_argument
   * "already exists"), nor be open or locked elsewhere (busy); a refusal creates nothing, and a
   * failure part-way removes what it made.
   */
  checkpoint(target: string): Promise<void>;
  /**
   * Closes the database. From the call on, every call on this handle, its transactions and
   * iterators answers closed (synchronous calls throw it, the rest reject); closing again does
   * nothing.
   */
  close(): Promise<void>;
}

export declare class Transaction {
  private constructor();
  readonly mode: Mode;
  set(key: Bytes, value: Bytes): void;
  delete(key: Bytes): void;
  /** Stamped with `timestamp` (1 to 2^63 - 1) instead of the commit's time. */
  setAt(key: Bytes, value: Bytes, timestamp: Timestamp): void;
  get<O extends ReadOptions = {}>(key: Bytes, options?: O): Decoded<O> | undefined;
  /**
   * As get(), with the read run as a task on the engine's executor (Transaction::get_async): the
   * promise settles on a later turn with the value get() gives. Never throws; bad arguments and
   * a finished transaction reject.
   */
  getAsync<O extends ReadOptions = {}>(key: Bytes, options?: O): Promise<Decoded<O> | undefined>;
  count(start?: Bytes, end?: Bytes): number;
  /** The iterator ends with the transaction: after commit() or rollback() its next() throws. */
  range<O extends RangeOptions = {}>(start?: Bytes, end?: Bytes, options?: O):
    RangeIterator<RangeEntry<O>>;
  /** Entries as [key, value] pairs, or keys with keysOnly. */
  scan<O extends ScanOptions = {}>(start?: Bytes, end?: Bytes, options?: O): Array<RangeEntry<O>>;
  /**
   * Versioned reads see the committed versions of the transaction's snapshot, not its own
   * writes. The value of `key` as of `timestamp`.
   */
  getAt<O extends ReadOptions = {}>(key: Bytes, timestamp: Timestamp, options?: O):
    Decoded<O> | undefined;
  /** Every version of `key`, newest first. */
  history<O extends HistoryOptions = {}>(key: Bytes, options?: O):
    Array<KeyVersion<Decoded<O>>>;
  /** The iterator ends with the transaction. */
  rangeAt<O extends RangeOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): RangeIterator<RangeEntry<O>>;
  scanAt<O extends ScanOptions = {}>(start: Bytes | undefined, end: Bytes | undefined,
    timestamp: Timestamp, options?: O): Array<RangeEntry<O>>;
  savepoint(): void;
  rollbackToSavepoint(): void;
  commit(options?: CommitOptions): Promise<void>;
  rollback(): void;
}

/** Both a synchronous and an asynchronous iterator; `break` in either loop closes it. */
export declare class RangeIterator<E> implements IterableIterator<E>, AsyncIterable<E> {
  private constructor();
  next(): IteratorResult<E, undefined>;
  return(): IteratorResult<E, undefined>;
  /** Skips up to `n` entries (a non-negative integer); returns how many. */
  skip(n: number): number;
  /** The next up to `n` entries (a non-negative integer, or Infinity). */
  take(n: number): E[];
  close(): void;
  [Symbol.iterator](): RangeIterator<E>;
  [Symbol.asyncIterator](): AsyncIterableIterator<E>;
}
