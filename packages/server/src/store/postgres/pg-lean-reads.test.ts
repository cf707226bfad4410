import { describe, expect, it } from 'vitest';
import { plainJson, RawJson, UnreadJson } from '../../core/raw-json.js';
import { makeJob, must, RETENTION, T0 } from '../conformance/fixtures.test-helpers.js';
import { openTestPgStore, pgUnavailable } from './pg-test-db.test-helpers.js';

const skip = await pgUnavailable();

// Issue #35 on PostgreSQL: reads that do not need a big value leave it in the table. The conformance suite checks
// what every store answers; this checks that PostgreSQL really leaves the values behind.
describe.skipIf(skip !== undefined)(`PostgreSQL reads leave big values in the table ${skip ?? ''}`, () => {
  it('a lean get leaves a big input unread, reads a small one; a finish does not read its big output back', async () => {
    const store = await openTestPgStore();
    try {
      const big = makeJob({ input: { image: 'A'.repeat(100_000) } });
      const small = makeJob({ input: { image: 'A'.repeat(60_000) } }); // under 64 KiB: read
      await store.insert(big);
      await store.insert(small);
      const lean = must(await store.get(big.id, { input: false }));
      expect(lean.input).toBeInstanceOf(UnreadJson);
      expect(() => JSON.stringify(lean)).toThrow(`the input of job ${big.id} was not read`);
      expect(plainJson(must(await store.get(small.id, { input: false })).input)).toEqual(small.input);
      expect(plainJson(must(await store.get(big.id)).input)).toEqual(big.input);

      const claimed = must(await store.claim(big.endpointId, 'w1', T0 + 1));
      expect(plainJson(claimed.input)).toEqual(big.input); // the worker needs it: the claim reads it
      const output = { image: 'B'.repeat(100_000) };
      const done = must(await store.finish(claimed.id, 1, { status: 'COMPLETED', output }, T0 + 2, RETENTION));
      expect(done.output).toBe(output); // the value it was finished with, not a copy read back
      expect(done.input).toBeInstanceOf(UnreadJson);
    } finally {
      await store.close();
    }
  });

  it('inputs and outputs kept as bytes go as bytes: inserted at once beside small jobs, finished priced and with a webhook', async () => {
    const store = await openTestPgStore();
    try {
      const bytes = (s: string) => new RawJson(Buffer.from(JSON.stringify(s)));
      const big = makeJob({ input: bytes(`é${'x'.repeat(100_000)}`) as unknown as Record<string, unknown> });
      const priced = makeJob({ input: { n: 1 }, cost: 0.25 });
      const hooked = makeJob({ input: { n: 2 }, webhook: 'http://127.0.0.1:9/hook' });
      await Promise.all([big, priced, hooked].map((j) => store.insert(j))); // one turn: the big one goes alone
      expect(plainJson(must(await store.get(big.id)).input)).toBe(`é${'x'.repeat(100_000)}`);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(must(await store.claim(big.endpointId, `w${i}`, T0 + 1)).id);
      expect(ids).toEqual([big.id, priced.id, hooked.id]);
      const out = { image: 'C'.repeat(100_000) };
      const outBytes = () => new RawJson(Buffer.from(JSON.stringify(out)));
      const [a, b, c] = await Promise.all(
        [big, priced, hooked].map((j) =>
          store.finish(j.id, 1, { status: 'COMPLETED', output: outBytes() }, T0 + 2, RETENTION),
        ),
      );
      expect(plainJson(must(a).output)).toEqual(out);
      expect(plainJson(must(b).output)).toEqual({ ...out, cost: 0.25 }); // merged by PostgreSQL from the bytes
      expect(plainJson(must(c).output)).toEqual(out); // the webhook's transaction, with its delivery
      for (const j of [big, priced, hooked])
        expect(plainJson(must(await store.get(j.id)).output)).toEqual(j === priced ? { ...out, cost: 0.25 } : out);
      expect(await store.claimWebhooks(T0 + 3, 10, T0 + 60_000)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
