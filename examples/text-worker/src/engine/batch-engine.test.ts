import { Tensor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedModel } from '../load.js';
import { loadStories } from '../testing.test-helpers.js';
import { BatchEngine, type GenerateRequest, type GenerateResult } from './batch-engine.js';

let m: LoadedModel;
beforeAll(async () => {
  m = await loadStories();
});
afterAll(async () => {
  await m?.model.dispose();
});

const PROMPTS = [
  'Once upon a time',
  'Tom had a red ball',
  'The sun',
  'Lily and her mom went to the park to play. They saw',
];

function engine(maxBatch: number) {
  return new BatchEngine(m.model, {
    decode: (ids) => m.tokenizer.decode(ids, { skip_special_tokens: true }),
    eosTokenIds: m.eosTokenIds,
    contextLength: m.contextLength,
    maxBatch,
  });
}
function req(prompt: string, extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return { promptIds: m.tokenizer.encode(prompt), maxTokens: 40, temperature: 0, topP: 1, stop: [], seed: 1, ...extra };
}

describe('BatchEngine on stories260K', () => {
  it('greedy text matches transformers.js generate()', async () => {
    const ids = m.tokenizer.encode(PROMPTS[0]!);
    const out = (await (m.model as any).generate({
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      max_new_tokens: 40,
      do_sample: false,
    })) as Tensor;
    const expected = m.tokenizer.decode((out.tolist()[0] as bigint[]).slice(ids.length).map(Number), {
      skip_special_tokens: true,
    });
    const r = await engine(1).generate(req(PROMPTS[0]!));
    expect(r.text).toBe(expected);
    expect(r.text).toContain('there was a little girl named Lily');
    expect(r).toMatchObject({ finishReason: 'length', completionTokens: 40, promptTokens: ids.length });
  });

  it('concurrent sequences of different lengths, joining at different steps, give the same text as one at a time', async () => {
    const alone: GenerateResult[] = [];
    for (const p of PROMPTS) alone.push(await engine(1).generate(req(p)));
    const e = engine(16);
    const together = await Promise.all(
      PROMPTS.map(async (p, i) => {
        await new Promise((r) => setTimeout(r, i * 15)); // later ones join a running batch
        return e.generate(req(p, { maxTokens: 40 - i * 5 }));
      }),
    );
    together.forEach((r, i) => expect(r.text).toBe(alone[i]!.text.slice(0, r.text.length)));
    together.forEach((r, i) => expect(r.completionTokens).toBe(40 - i * 5));
    expect(e.stats.maxBatchSeen).toBeGreaterThan(1);
    // Shared passes: far fewer decoding passes than tokens.
    expect(e.stats.forwardPasses).toBeLessThan(together.reduce((s, r) => s + r.completionTokens, 0));
  });

  it('prompts arriving together share one left-padded prefill pass and give the same text as alone', async () => {
    const alone: GenerateResult[] = [];
    for (const p of PROMPTS) alone.push(await engine(1).generate(req(p)));
    const e = engine(16);
    const together = await Promise.all(PROMPTS.map((p) => e.generate(req(p))));
    expect(together.map((r) => r.text)).toEqual(alone.map((r) => r.text));
    expect(e.stats.prefills).toBe(1);
    expect(e.stats.maxBatchSeen).toBe(PROMPTS.length);
  });

  it('same seed, same text; stop strings cut the text; deltas add up to the text; abort cancels', async () => {
    const e = engine(4);
    const a = await e.generate(req(PROMPTS[0]!, { temperature: 0.9, topP: 0.9, seed: 42 }));
    const b = await e.generate(req(PROMPTS[0]!, { temperature: 0.9, topP: 0.9, seed: 42 }));
    expect(a.text).toBe(b.text);
    const deltas: string[] = [];
    const s = await e.generate(req(PROMPTS[0]!, { stop: ['Lily'], onDelta: (d) => deltas.push(d) }));
    expect(s).toMatchObject({ text: ', there was a little girl named ', finishReason: 'stop' });
    expect(deltas.join('')).toBe(s.text);
    expect(deltas.length).toBeGreaterThan(3);
    const ac = new AbortController();
    const pending = e.generate(req(PROMPTS[0]!, { maxTokens: 400, signal: ac.signal, onDelta: () => ac.abort() }));
    expect((await pending).finishReason).toBe('cancelled');
  });
});
