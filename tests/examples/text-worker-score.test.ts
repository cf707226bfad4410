import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil, startBerthDev, type BerthDev } from '../e2e/harness.test-helpers.js';
import type { LoadedModel } from '../../examples/text-worker/src/load.js';
import { scoreItem, type ScoreOutput } from '../../examples/text-worker/src/score/handler.js';
import { scoreMany } from '../../examples/text-worker/src/score/scorer.js';
import { loadStories, MODELS_DIR, REPO_ROOT } from '../../examples/text-worker/src/testing.test-helpers.js';

// The batched `score` endpoint (score-worker.ts, a `start({ batch })` handler) through the real `berth dev` and a
// real worker process on stories260K, against the same model scoring each text alone in this process.
let berth: BerthDev;
let m: LoadedModel;
const TERMINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const PROMPTS = ['Once upon a time', 'Tom had a red ball', 'The sun was hot', 'Lily saw a cat', 'One day, a bird'];

beforeAll(async () => {
  [berth, m] = await Promise.all([
    startBerthDev({
      config: join(REPO_ROOT, 'examples/text-worker/berth.config.json'),
      env: { BERTH_MODELS_DIR: MODELS_DIR, BERTH_TEXT_THREADS: '1', BERTH_LOG_LEVEL: 'warn' },
      waitForWorkers: ['score'],
    }),
    loadStories(),
  ]);
}, 60_000);
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
  await m?.model.dispose();
});

const finished = (id: string) =>
  pollUntil(
    async () => (await berth.json(`/v2/score/status/${id}`)).body,
    (b) => TERMINAL.includes(b.status),
    20_000,
    50,
  );

describe('berth dev -> score endpoint (batched, stories260K)', () => {
  it('concurrent jobs share batches; each gets the score its text has alone', async () => {
    const inputs = Array.from({ length: 24 }, (_, i) => ({
      text: ` and ${PROMPTS[(i + 1) % PROMPTS.length]!.toLowerCase()}.`.repeat(1 + (i % 3)),
      context: PROMPTS[i % PROMPTS.length]!,
    }));
    const ids = await Promise.all(
      inputs.map(async (input) => {
        const res = await berth.post('/v2/score/run', { input });
        expect(res.status).toBe(200);
        return res.body.id as string;
      }),
    );
    const outs = await Promise.all(ids.map(finished));
    expect(outs.map((o) => o.status)).toEqual(Array(24).fill('COMPLETED'));
    const alone = await Promise.all(inputs.map(async (input) => (await scoreMany(m.model, [scoreItem(m, input)]))[0]!));
    outs.forEach((o, i) => {
      const out = o.output as ScoreOutput;
      expect(out.tokens).toBe(alone[i]!.tokenLogprobs.length);
      expect(out.logprob).toBeCloseTo(
        alone[i]!.tokenLogprobs.reduce((a, b) => a + b, 0),
        3,
      );
    });
    const health = (await berth.json('/v2/score/health')).body;
    expect(health.batch).toMatchObject({ maxSize: 16 });
    expect(health.batch.jobs).toBeGreaterThan(health.batch.batches); // some batch held more than one job
  }, 60_000);

  it('a lone job answers at once; bad inputs fail with their code, and the worker keeps serving', async () => {
    const ok = await berth.post('/v2/score/runsync', {
      input: { text: ', there was a little girl', context: 'Once upon a time', token_logprobs: true },
    });
    expect(ok.body.status).toBe('COMPLETED');
    expect(ok.body.output.token_logprobs.map((t: { token: string }) => t.token).join('')).toBe(',therewasalittlegirl');
    expect(ok.body.output.mean_logprob).toBeGreaterThan(-1);
    const bad = await berth.post('/v2/score/runsync', { input: { prompt: 'Once' } });
    expect(bad.body.status).toBe('FAILED');
    expect(bad.body.error).toMatch(/^invalid_input: /);
    const long = await berth.post('/v2/score/runsync', { input: { text: 'the cat sat on the mat. '.repeat(200) } });
    expect(long.body.status).toBe('FAILED');
    expect(long.body.error).toMatch(/^context_length_exceeded: /);
    const again = await berth.post('/v2/score/runsync', { input: { text: 'Lily' } });
    expect(again.body).toMatchObject({ status: 'COMPLETED', output: { tokens: expect.any(Number) } });
  }, 30_000);
});
