import { createLogger, start } from '@berth/worker';
import { fakeScoreHandler, itersFromEnv, reportBurntOnSignal } from './fake-model.js';

// A batched endpoint on the fake model of fake-model.ts (BERTH_FAKE_ITERS of busy loop per job of a batch), with the
// score endpoint's batch settings. Started by scripts/overhead.ts through `berth dev`.
reportBurntOnSignal('fake-score');
try {
  start({ name: 'fake-score-worker', batch: { maxSize: 16, maxWaitMs: 5 }, handler: fakeScoreHandler(itersFromEnv()) });
} catch (err) {
  createLogger().error((err as Error).message);
  process.exit(1);
}
