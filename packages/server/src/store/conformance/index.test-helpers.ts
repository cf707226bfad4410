import { describe } from 'vitest';
import { countRaceTests } from './counts-races.test-helpers.js';
import { deadlineTests } from './deadlines.test-helpers.js';
import type { MakeStore } from './fixtures.test-helpers.js';
import { bigPayloadTests } from './big-payloads.test-helpers.js';
import { batchTests } from './batches.test-helpers.js';
import { batchLaneTests } from './batch-lane.test-helpers.js';
import { jobListingTests } from './job-listing.test-helpers.js';
import { lifecycleTests } from './lifecycle.test-helpers.js';
import { jobLogTests } from './logs.test-helpers.js';
import { pricedTests } from './priced.test-helpers.js';
import { queuePositionTests } from './queue-position.test-helpers.js';
import { recoveryTests } from './recovery.test-helpers.js';
import { retryStreamTests } from './retries-streams.test-helpers.js';
import { webhookOutboxTests } from './webhooks.test-helpers.js';

// The one test suite every `Store` implementation must pass (memory now; SQLite and PostgreSQL later).
// Time is always passed explicitly (no wall clock, no sleeps); races are written as sequences of calls, plus a
// few `Promise.all` pairs that a durable store must serialise. What the suite takes as the contract beyond the
// doc comments of `types.ts`:
// - returned records are copies of the top-level fields; nested values (input, output, progress, chunks) are
//   read-only for callers, so deep copies are not required;
// - `due()` reports what is due now, statelessly: a job nobody acted on is reported again by the next call;
// - retry puts the job at the end of its endpoint's queue; a new attempt starts with no progress and an empty
//   stream; a seq gap in `appendStream` is refused (0); chunks not yet taken survive the job's end.
//
// Layout: `fixtures` (constants, `makeJob`, `must`, `useStore`) and one file per topic, each registering its
// `describe` blocks; every block gets a new store per test from `makeStore`.

export type { MakeStore } from './fixtures.test-helpers.js';

/**
 * Registers `describe(name)` with the conformance tests. `makeStore` is called before each test and must return
 * an empty store; it is closed after the test.
 *
 * @example runStoreConformance('MemoryStore', () => new MemoryStore())
 */
export function runStoreConformance(name: string, makeStore: MakeStore): void {
  describe(name, () => {
    lifecycleTests(makeStore);
    bigPayloadTests(makeStore);
    retryStreamTests(makeStore);
    deadlineTests(makeStore);
    countRaceTests(makeStore);
    recoveryTests(makeStore);
    pricedTests(makeStore);
    webhookOutboxTests(makeStore);
    jobLogTests(makeStore);
    queuePositionTests(makeStore);
    jobListingTests(makeStore);
    batchTests(makeStore);
    batchLaneTests(makeStore);
  });
}
