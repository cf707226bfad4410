#!/usr/bin/env node
// Runs the whole vitest suite and ends with one plain summary line: "Tests: N passed, N failed, N skipped",
// after a list of what was skipped and why (each skipped suite's title carries its reason: "(skipped: ...)").
// Extra arguments go to vitest (e.g. `npm test -- packages/server`).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { relative } from 'node:path';
import { preflight } from './preflight.mjs';

const ready = preflight(); // every program the suite drives: installed, or one message naming the packages
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

/** "Skipped: N in <file>: <suite title>" per skipped suite (the title says why), from vitest's JSON report. */
function skippedLines(report) {
  const groups = new Map();
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      if (t.status !== 'pending' && t.status !== 'skipped' && t.status !== 'todo') continue;
      const rel = relative(process.cwd(), file.name);
      const title = [...(t.ancestorTitles ?? []), t.title].find((x) => /skipped|needs|missing|not installed/i.test(x));
      const key = `${rel}: ${title ?? [...(t.ancestorTitles ?? []), t.title].join(' > ')}`;
      groups.set(key, (groups.get(key) ?? 0) + 1);
    }
  }
  return [...groups].map(([key, n]) => `Skipped: ${n} in ${key}`);
}
let summary = 'Tests: no results were written';
try {
  const j = JSON.parse(readFileSync(out, 'utf8'));
  const skipped = (j.numPendingTests ?? 0) + (j.numTodoTests ?? 0);
  for (const line of skippedLines(j)) console.log(line);
  // A file that fails before any test runs (an import error) counts as one failure, so the line cannot say 0.
  const brokenFiles = (j.testResults ?? []).filter(
    (f) => f.status === 'failed' && !(f.assertionResults ?? []).some((t) => t.status === 'failed'),
  ).length;
  summary = `Tests: ${j.numPassedTests} passed, ${j.numFailedTests + brokenFiles} failed, ${skipped} skipped`;
} catch {}
console.log(summary);
process.exit(r.status ?? 1);
