import { runBatch } from '@berth/worker/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedModel } from '../load.js';
import { loadStories } from '../testing.test-helpers.js';
import { createScoreHandler, scoreItem, type ScoreOutput } from './handler.js';
import { ScoreInput } from './input-schema.js';
import { scoreMany } from './scorer.js';

let m: LoadedModel;
beforeAll(async () => {
  m = await loadStories();
});
afterAll(async () => {
  await m?.model.dispose();
});

const TEXTS = [
  { text: 'Once upon a time, there was a little girl named Lily.' },
  { text: ' there was a little girl', context: 'Once upon a time,' },
  { text: 'Tom' },
  { text: 'girl little a was there time upon Once', context: 'Lily and her mom went to the park to play. They saw' },
];

describe('score (stories260K)', () => {
  it('scores each text in a batch exactly as alone, whatever the padding', async () => {
    const items = TEXTS.map((t) => scoreItem(m, t));
    const together = await scoreMany(m.model, items);
    for (const [i, item] of items.entries()) {
      const [alone] = await scoreMany(m.model, [item]);
      expect(together[i]!.tokenLogprobs).toHaveLength(item.ids.length - item.from);
      together[i]!.tokenLogprobs.forEach((lp, t) => expect(lp).toBeCloseTo(alone!.tokenLogprobs[t]!, 4));
    }
  });

  it('scores the next tokens: the greedy continuation is likely, its shuffle is not; the chain rule holds', async () => {
    const [greedy, shuffled] = await scoreMany(m.model, [
      scoreItem(m, { text: ' there was a little girl named Lily', context: 'Once upon a time,' }),
      scoreItem(m, { text: ' Lily named girl little a was there', context: 'Once upon a time,' }),
    ]);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(greedy!.tokenLogprobs)).toBeGreaterThan(-1); // a 512-token vocabulary: uniform would be -6.2
    expect(mean(shuffled!.tokenLogprobs)).toBeLessThan(mean(greedy!.tokenLogprobs) - 2);
    // log p(AB | X) = log p(A | X) + log p(B | X A), with the tokens of A and B as in AB.
    const all = scoreItem(m, { text: ' there was a little girl', context: 'Once upon a time,' });
    const split = all.from + 2;
    const [whole, head, tail] = await scoreMany(m.model, [
      all,
      { ids: all.ids.slice(0, split), from: all.from },
      { ids: all.ids, from: split },
    ]);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(head!.tokenLogprobs) + sum(tail!.tokenLogprobs)).toBeCloseTo(sum(whole!.tokenLogprobs), 4);
  });

  it('the batch handler: one output per job; a refused input and a text past the context fail alone', async () => {
    const long = 'the cat sat on the mat. '.repeat(200);
    const results = await runBatch(
      createScoreHandler(m),
      [TEXTS[0]!, { text: 'Tom', token_logprobs: true }, { text: '' }, { text: long }, { text: 'Lily', extra: 1 }],
      { inputSchema: ScoreInput },
    );
    expect(results.map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'FAILED', 'FAILED', 'FAILED']);
    const a = results[0]!.output as ScoreOutput;
    const [alone] = await scoreMany(m.model, [scoreItem(m, TEXTS[0]!)]);
    expect(a.tokens).toBe(alone!.tokenLogprobs.length);
    expect(a.logprob).toBeCloseTo(
      alone!.tokenLogprobs.reduce((x, y) => x + y, 0),
      4,
    );
    expect(a.mean_logprob).toBeCloseTo(a.logprob / a.tokens, 10);
    expect(a.perplexity).toBeCloseTo(Math.exp(-a.mean_logprob), 10);
    expect(a.token_logprobs).toBeUndefined();
    const b = results[1]!.output as ScoreOutput;
    expect(b.token_logprobs!.map((t) => t.token).join('')).toBe('Tom');
    expect(b.token_logprobs!.reduce((x, t) => x + t.logprob, 0)).toBeCloseTo(b.logprob, 10);
    expect(results[2]!.error).toMatch(/^invalid_input: text: /);
    expect(results[3]!.error).toMatch(
      /^context_length_exceeded: context and text are \d+ tokens; this model's context is 512 tokens$/,
    );
    expect(results[4]!.error).toMatch(/^invalid_input: .*extra/);
  });
});
