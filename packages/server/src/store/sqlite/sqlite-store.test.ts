import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { runStoreConformance } from '../conformance/index.test-helpers.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-sqlite-conf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

runStoreConformance('SqliteStore (file, NORMAL)', () => new SqliteStore({ file: join(dir, `normal-${++n}.sqlite`) }));
runStoreConformance(
  'SqliteStore (file, FULL)',
  () => new SqliteStore({ file: join(dir, `full-${++n}.sqlite`), durability: 'full' }),
);
