import { describe, expect, it } from 'vitest';
import { must, RETENTION, T0, useStore, type MakeStore } from './fixtures.test-helpers.js';

/** `JobRecord.cost`: kept from insert, merged into a COMPLETED object output by `finish` in the same write. */
export function pricedTests(makeStore: MakeStore): void {
  describe('priced jobs', () => {
    const ctx = useStore(makeStore);

    it('merges the cost into a COMPLETED object output, and into nothing else', async () => {
      const a = await ctx.start({ cost: 0.0125 });
      expect((await ctx.store.get(a.id))?.cost).toBe(0.0125);
      const done = must(
        await ctx.store.finish(
          a.id,
          a.attempt,
          { status: 'COMPLETED', output: { image_url: 'u', n: [1, 2] } },
          T0 + 2_000,
          RETENTION,
        ),
      );
      expect(done.output).toEqual({ image_url: 'u', n: [1, 2], cost: 0.0125 });
      expect((await ctx.store.get(a.id))?.output).toEqual({ image_url: 'u', n: [1, 2], cost: 0.0125 });

      const b = await ctx.start({ cost: 2 });
      expect(
        must(
          await ctx.store.finish(b.id, b.attempt, { status: 'COMPLETED', output: ['a list'] }, T0 + 2_000, RETENTION),
        ).output,
      ).toEqual(['a list']);
      const c = await ctx.start({ cost: 2 });
      expect(
        must(await ctx.store.finish(c.id, c.attempt, { status: 'FAILED', error: 'x' }, T0 + 2_000, RETENTION)).output,
      ).toBeUndefined();
      const d = await ctx.start();
      expect(
        must(
          await ctx.store.finish(d.id, d.attempt, { status: 'COMPLETED', output: { ok: true } }, T0 + 2_000, RETENTION),
        ).output,
      ).toEqual({ ok: true });
    });
  });
}
