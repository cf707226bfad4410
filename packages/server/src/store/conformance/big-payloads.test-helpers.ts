import { describe, expect, it } from 'vitest';
import { plainJson, UnreadJson } from '../../core/raw-json.js';
import { makeJob, must, RETENTION, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

/** A base64-like string of `chars` characters (an image sent inline). */
const blob = (chars: number, seed: string) => seed.repeat(Math.ceil(chars / seed.length)).slice(0, chars);

/**
 * Big inputs and outputs (a SQLite store keeps inputs of 64 KiB and more aside, see sqlite/big-inputs.ts; a SQL
 * store hands text of 256 KiB and more back unparsed, as `RawJson`): every step returns them whole, and a retried
 * or requeued job keeps its input.
 */
export function bigPayloadTests(makeStore: MakeStore): void {
  describe('big payloads', () => {
    const ctx = useStore(makeStore);

    it('a 1 MB input and output round-trip through insert, claim, finish, retry and delete', async () => {
      const input = { image: blob(1_000_000, 'QUJD+/9'), n: 7 };
      const job = makeJob({ input });
      await ctx.store.insert(job);
      expect(plainJson(must(await ctx.store.get(job.id)).input)).toEqual(input);
      const claimed = must(await ctx.store.claim(job.endpointId, 'w1', T0 + 1));
      expect(plainJson(claimed.input)).toEqual(input);
      const output = { image: blob(1_000_000, 'ZXhh'), n: 7 };
      const fin = must(await ctx.store.finish(job.id, 1, { status: 'FAILED', error: 'once' }, T0 + 2, RETENTION));
      expect(fin.status).toBe('FAILED');
      const again = must(await ctx.store.retry(job.id, T0 + 3));
      expect(plainJson(again.input)).toEqual(input);
      const second = must(await ctx.store.claim(job.endpointId, 'w1', T0 + 4));
      expect(plainJson(second.input)).toEqual(input);
      const done = must(await ctx.store.finish(job.id, 2, { status: 'COMPLETED', output }, T0 + 5, RETENTION));
      expect(plainJson(done.output)).toEqual(output);
      const read = must(await ctx.store.get(job.id));
      expect(plainJson(read.output)).toEqual(output);
      expect(plainJson(read.input)).toEqual(input);
      expect(await ctx.store.delete(job.id)).toBe(true);
      expect(await ctx.store.get(job.id)).toBeUndefined();
    });

    it('a read without the input answers the rest whole; a big input it leaves behind refuses to be read', async () => {
      const input = { image: blob(300_000, 'QUJD+/9'), n: 3 };
      const job = makeJob({ input });
      const small = makeJob({ input: { n: 4 } });
      await ctx.store.insert(job);
      await ctx.store.insert(small);
      must(await ctx.store.claim(job.endpointId, 'w1', T0 + 1));
      const output = { image: blob(300_000, 'ZXhh'), n: 3 };
      must(await ctx.store.finish(job.id, 1, { status: 'COMPLETED', output }, T0 + 2, RETENTION));
      const lean = must(await ctx.store.get(job.id, { input: false }));
      expect(lean).toMatchObject({ id: job.id, status: 'COMPLETED', attempt: 1, workerId: 'w1' });
      expect(plainJson(lean.output)).toEqual(output); // the output is what a status answer needs
      const leftInput = lean.input as unknown;
      if (leftInput instanceof UnreadJson) expect(() => plainJson(leftInput)).toThrow(`job ${job.id}`);
      else expect(plainJson(leftInput)).toEqual(input); // a store that reads it anyway answers it whole
      expect(plainJson(must(await ctx.store.get(small.id, { input: false })).input)).toEqual({ n: 4 });
      expect(plainJson(must(await ctx.store.get(job.id)).input)).toEqual(input); // asked for, it is read
    });

    it("a priced job's big output gets its cost, in the finish's answer and in a later read", async () => {
      const job = makeJob({ input: { n: 5 } });
      job.cost = 0.5;
      await ctx.store.insert(job);
      must(await ctx.store.claim(job.endpointId, 'w1', T0 + 1));
      const output = { image: blob(300_000, 'ZXhh') };
      const done = must(await ctx.store.finish(job.id, 1, { status: 'COMPLETED', output }, T0 + 2, RETENTION));
      expect(plainJson(done.output)).toEqual({ ...output, cost: 0.5 });
      expect(plainJson(must(await ctx.store.get(job.id, { input: false })).output)).toEqual({ ...output, cost: 0.5 });
    });

    it('inputs just under and over 64 KiB of JSON both come back equal', async () => {
      for (const chars of [64 * 1024 - 20, 64 * 1024 - 10, 64 * 1024, 70_000]) {
        const job = makeJob({ input: { s: blob(chars, 'ab') } });
        await ctx.store.insert(job);
        expect(plainJson(must(await ctx.store.get(job.id)).input), String(chars)).toEqual(job.input);
      }
    });
  });
}
