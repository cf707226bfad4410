import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';
import type { WalSync } from './wal-sync.js';

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** A WalSync whose fsync the test ends by hand. */
class FakeSync {
  syncing = false;
  private hooks: (() => void)[] = [];
  waiting: Waiter[] = [];
  get pending(): boolean {
    return this.syncing || this.waiting.length > 0;
  }
  after(...w: Waiter[]): void {
    this.waiting.push(...w);
  }
  whenSynced(fn: () => void): void {
    if (this.syncing) this.hooks.push(fn);
    else fn();
  }
  /** The fsync in flight completes: its waiters settle, then what waited for it runs. */
  complete(): void {
    this.syncing = false;
    for (const w of this.waiting.splice(0)) w.resolve();
    for (const fn of this.hooks.splice(0)) fn();
  }
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('GroupCommit with a WAL fsync (durability full)', () => {
  let db: BetterSqlite3.Database;
  afterEach(() => db.close());
  /** An in-memory table `t` behind a GroupCommit whose fsyncs the test completes by hand. */
  const open = () => {
    db = new BetterSqlite3(':memory:');
    db.exec('CREATE TABLE t (x INTEGER)');
    const sync = new FakeSync();
    return { sync, tx: new GroupCommit(db, () => {}, sync as unknown as WalSync) };
  };

  it('keeps the batch open while an fsync runs and commits every turn of the wait at once after it', async () => {
    const { sync, tx } = open();
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const settled: number[] = [];

    sync.syncing = true; // an earlier batch's fsync is running
    const a = tx.write(() => insert.run(1)).then(() => settled.push(1));
    await turn();
    await turn();
    const b = tx.write(() => insert.run(2)).then(() => settled.push(2));
    await turn();
    expect(tx.commits).toBe(0); // still open: nothing could settle before the next fsync anyway
    expect(db.inTransaction).toBe(true);

    sync.complete(); // the running fsync ends: the batch commits, and waits for the next one
    expect(tx.commits).toBe(1);
    expect(db.inTransaction).toBe(false);
    await turn();
    expect(settled).toEqual([]); // committed, not yet synced

    sync.complete();
    await Promise.all([a, b]);
    expect(settled).toEqual([1, 2]);
  });

  it('commits at the end of the turn when no fsync runs', async () => {
    const { sync, tx } = open();
    const done = tx.write(() => db.prepare('INSERT INTO t VALUES (1)').run());
    await turn();
    expect(tx.commits).toBe(1);
    sync.complete();
    await done;
  });

  it('settles an early write at its COMMIT, fsyncs a batch only for its durable writes, and sync() waits for one', async () => {
    const { sync, tx } = open();
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const settled: string[] = [];

    const early = tx.write(() => insert.run(1), false, true).then(() => settled.push('early'));
    await turn();
    await early;
    expect(tx.commits).toBe(1);
    expect(sync.waiting).toHaveLength(0); // early writes alone start no fsync: the next one covers them

    const durable = tx.write(() => insert.run(2)).then(() => settled.push('durable'));
    const early2 = tx.write(() => insert.run(3), false, true).then(() => settled.push('early2'));
    await turn();
    await early2;
    expect(settled).toEqual(['early', 'early2']); // the durable write of the same batch waits for its fsync
    expect(sync.waiting).toHaveLength(1);

    const synced = tx.sync().then(() => settled.push('sync'));
    sync.complete();
    await Promise.all([durable, synced]);
    expect(settled).toEqual(['early', 'early2', 'durable', 'sync']);
  });
});

describe('GroupCommit writes of one statement (no savepoint)', () => {
  let db: BetterSqlite3.Database;
  afterEach(() => db.close());

  it('a failing one-statement write rejects alone; the rest of its batch commits', async () => {
    db = new BetterSqlite3(':memory:');
    db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)');
    const tx = new GroupCommit(db, () => {});
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const results = await Promise.allSettled([
      tx.write(() => insert.run(1), true),
      tx.write(() => insert.run(1), true), // duplicate key: SQLite undoes this statement only
      tx.write(() => insert.run(2), true),
      tx.write(() => insert.run(3)), // with its savepoint, in the same batch
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(tx.commits).toBe(1);
    expect(db.prepare('SELECT x FROM t ORDER BY x').pluck().all()).toEqual([1, 2, 3]);
  });
});
