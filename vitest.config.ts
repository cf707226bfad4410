import { defineConfig } from 'vitest/config';

// Three projects: `unit` (tests next to the code: in memory, real sockets, real stores; `npm run test:unit`, the fast
// inner loop), `system` (tests/: the real berth binary and worker processes, Chromium, runpod-python, PostgreSQL
// replicas, the durability checkers) and `docker` (tests/ that start a dockerd: one file at a time, after the
// others, since two daemons cannot share a data root). `npm test` runs all three.
const exclude = ['**/node_modules/**', '**/dist/**'];
const DOCKER = ['tests/e2e/images.test.ts', 'tests/e2e/docker-*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.test.ts',
            'examples/*/**/*.test.ts',
            'templates/*/src/**/*.test.ts',
            'bench/**/*.test.ts',
          ],
          exclude,
          // Two files at a time: vitest's default in run mode is one worker per CPU minus one, which is a single
          // worker on a 2-core machine; these tests mostly wait on sockets, timers and child processes. A project
          // with its own maxWorkers needs its own group: the unit files run first, then system, then docker.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'system',
          include: ['tests/**/*.test.ts'],
          exclude: [...exclude, ...DOCKER],
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'docker', include: DOCKER, exclude, fileParallelism: false, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
