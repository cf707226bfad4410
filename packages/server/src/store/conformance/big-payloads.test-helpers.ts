import { describe, expect, it } from 'vitest';
import { plainJson } from '../../core/raw-json.js';
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

    it('inputs just under and over 64 KiB of JSON both come back equal', async () => {
      for (const chars of [64 * 1024 - 20, 64 * 1024 - 10, 64 * 1024, 70_000]) {
        const job = makeJob({ input: { s: blob(chars, 'ab') } });
        await ctx.store.insert(job);
        expect(plainJson(must(await ctx.store.get(job.id)).input), String(chars)).toEqual(job.input);
      }
    });
  });
}
