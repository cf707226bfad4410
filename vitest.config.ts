import { defineConfig } from 'vitest/config';

// Two projects: `unit` (tests next to the code: in memory, real sockets, real stores; `npm run test:unit`, the fast
// inner loop) and `system` (tests/: the real berth binary and worker processes, Docker, Chromium, runpod-python,
// PostgreSQL replicas, the durability checkers). `npm test` runs both.
const exclude = ['**/node_modules/**', '**/dist/**'];

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
        },
      },
      { extends: true, test: { name: 'system', include: ['tests/**/*.test.ts'], exclude } },
    ],
  },
});
