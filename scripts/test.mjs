#!/usr/bin/env node
// Runs the whole vitest suite and ends with one plain summary line: "Tests: N passed, N failed, N skipped".
// Extra arguments go to vitest (e.g. `npm test -- packages/server`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { preflight } from './preflight.mjs';

const ready = preflight(); // espeak-ng, ffmpeg, chromium: installed, or one message naming the packages
if (ready !== 0) process.exit(ready);

const out = 'node_modules/.cache/berth-test-results.json';
mkdirSync('node_modules/.cache', { recursive: true });
rmSync(out, { force: true });
const vitest = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname;
const args = [
  vitest,
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${out}`,
  ...process.argv.slice(2),
];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
let summary = 'Tests: no results were written';
try {
  const j = JSON.parse(readFileSync(out, 'utf8'));
  const skipped = (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
  summary = `Tests: ${j.numPassedTests} passed, ${j.numFailedTests} failed, ${skipped} skipped`;
} catch {}
console.log(summary);
process.exit(r.status ?? 1);
