import { afterEach, beforeEach, expect } from 'vitest';
import type { FinishPatch, JobRecord, RetentionPolicy, Store } from '../types.js';

// Shared fixtures of the store conformance suite: constants, job factory and a per-test store with helpers.

/** Returns an empty store; called before each test, the store is closed after it. */
export type MakeStore = () => Promise<Store> | Store;

/** Distinct values so sync and async retention can be told apart. */
export const RETENTION: RetentionPolicy = { async: 30 * 60_000, sync: 60_000 };
/** The `Store.requeue` options most tests share (spread, then give the attempt, now and maxAttempts). */
export const LOST = { failError: 'lost', retention: RETENTION } as const;
/** An arbitrary epoch ms. */
export const T0 = 1_700_000_000_000;
export const HOUR = 3_600_000;

let counter = 0;

/** A new IN_QUEUE job on endpoint `ep`, executionTimeout 60 s, ttl 24 h; ids are unique per process. */
export function makeJob(overrides: Partial<JobRecord> = {}): JobRecord {
  counter++;
  return {
    id: `job-${counter}`,
    endpointId: 'ep',
    status: 'IN_QUEUE',
    input: { n: counter },
    executionTimeout: 60_000,
    lowPriority: false,
    sync: false,
    attempt: 0,
    retries: 0,
    createdAt: T0,
    queuedAt: T0,
    expiresAt: T0 + 24 * HOUR,
    ...overrides,
  };
}

export function must<T>(value: T | undefined, what = 'a value'): T {
  if (value === undefined) throw new Error(`expected ${what}, got undefined`);
  return value;
}

export const COMPLETE: FinishPatch = { status: 'COMPLETED', output: { text: ['done'] } };
export const FAIL: FinishPatch = { status: 'FAILED', error: 'handler threw' };
export const TIME_OUT: FinishPatch = { status: 'TIMED_OUT', error: 'execution timed out' };
export const NOTHING_DUE = { expired: [], timedOut: [], retained: [], leaseExpired: [] };
export const ids = (rs: readonly { id: string }[]): string[] => rs.map((r) => r.id).sort();

/** The store of the running test and helpers that act on it. */
export interface StoreFixture {
  /** The store of the running test (read it inside a test or hook, not while registering). */
  readonly store: Store;
  /** Inserts a new job made by `makeJob(o)`. */
  add(o?: Partial<JobRecord>): Promise<JobRecord>;
  /** Inserts a job and claims it (the endpoint's queue must hold nothing older). */
  start(o?: Partial<JobRecord>, workerId?: string, now?: number): Promise<JobRecord>;
  /** Inserts, claims and finishes a job with `patch`. */
  end(patch: FinishPatch, o?: Partial<JobRecord>, now?: number): Promise<JobRecord>;
  /** Asserts the job did not change across `fn`. */
  unchanged(id: string, fn: () => Promise<void>): Promise<void>;
}

/**
 * Registers hooks in the current `describe` that give each of its tests a new store from `makeStore` and close
 * it afterwards; returns the fixture to use in those tests.
 *
 * @example describe('claim', () => { const ctx = useStore(makeStore); it('...', async () => { await ctx.add(); }); })
 */
export function useStore(makeStore: MakeStore): StoreFixture {
  let current: Store | undefined;
  beforeEach(async () => {
    current = await makeStore();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  const fixture: StoreFixture = {
    get store() {
      return must(current, 'a store (only inside a test)');
    },
    async add(o = {}) {
      const job = makeJob(o);
      await fixture.store.insert(job);
      return job;
    },
    async start(o = {}, workerId = 'w1', now = T0 + 1_000) {
      const job = await fixture.add(o);
      const claimed = must(await fixture.store.claim(job.endpointId, workerId, now), 'a claimed job');
      expect(claimed.id).toBe(job.id);
      return claimed;
    },
    async end(patch, o = {}, now = T0 + 2_000) {
      const job = await fixture.start(o);
      return must(await fixture.store.finish(job.id, job.attempt, patch, now, RETENTION), 'a finished job');
    },
    async unchanged(id, fn) {
      const before = await fixture.store.get(id);
      await fn();
      expect(await fixture.store.get(id)).toEqual(before);
    },
  };
  return fixture;
}

/** A small seeded PRNG (mulberry32) so failures reproduce. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
