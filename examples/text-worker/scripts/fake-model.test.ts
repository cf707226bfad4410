import { runBatch } from '@berth/worker/testing';
import { describe, expect, it } from 'vitest';
import { burn, burnt, calibrate, FakeEngine, fakeScoreHandler } from './fake-model.js';

const req = (maxTokens: number, onDelta?: (t: string) => void) => ({
  promptIds: [1, 2, 3],
  maxTokens,
  temperature: 1,
  topP: 1,
  stop: [],
  seed: 0,
  ...(onDelta ? { onDelta } : {}),
});

describe('the fake model of the overhead benchmark', () => {
  it('calibrates its busy loop to a CPU time and counts the CPU it burns', () => {
    const iters = calibrate(1000);
    expect(iters).toBeGreaterThan(1000);
    const before = { ...burnt };
    for (let i = 0; i < 20; i++) burn(iters, 1);
    const perUnit = (burnt.us - before.us) / (burnt.units - before.units);
    expect(burnt.units - before.units).toBe(20);
    // A loaded machine blurs it, but not by an order of magnitude.
    expect(perUnit).toBeGreaterThan(300);
    expect(perUnit).toBeLessThan(5000);
  });

  it('makes exactly max_tokens tokens, one onDelta each, and shares steps between concurrent sequences', async () => {
    const engine = new FakeEngine(1000);
    const deltas: string[] = [];
    const units = burnt.units;
    const [a, b] = await Promise.all([engine.generate(req(5, (t) => deltas.push(t))), engine.generate(req(3))]);
    expect(a).toMatchObject({ completionTokens: 5, finishReason: 'length', promptTokens: 3, text: ' tok'.repeat(5) });
    expect(b?.completionTokens).toBe(3);
    expect(deltas).toEqual(Array(5).fill(' tok'));
    expect(burnt.units - units).toBe(8); // a unit per token of each sequence
    expect(engine.load).toBe(0);
  });

  it('a batch handler answers every job of a batch', async () => {
    const rs = await runBatch(fakeScoreHandler(1000), [{ text: 'ab' }, { text: 'abc' }]);
    expect(rs.map((r) => r.output)).toEqual([
      { tokens: 1, text_length: 2 },
      { tokens: 1, text_length: 3 },
    ]);
  });
});
