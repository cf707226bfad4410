import { describe, it } from 'vitest';
import { runStoreConformance } from '../conformance/index.test-helpers.js';
import { openTestPgStore, pgUnavailable } from './pg-test-db.test-helpers.js';

// Every test gets a store in its own new schema (dropped on close), so test files run in parallel safely.
const skip = await pgUnavailable();
if (skip) describe.skip(`PgStore: ${skip}`, () => it('needs PostgreSQL', () => {}));
else runStoreConformance('PgStore', () => openTestPgStore());
