// The outbox budget of progress/output webhooks (issue #36): a job's event bodies are capped, and so are those of
// every job this process tracks at once; a job that ends gives its share back. On a real MemoryStore.
import type { Logger } from '@berth/protocol/log';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { makeJob } from '../store/conformance/fixtures.test-helpers.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import type { WebhookDelivery } from '../store/types.js';
import { EventWebhooks } from './event-webhooks.js';

const HOOK = 'https://example.org/hook';

describe('event webhooks budget', () => {
  it('stops a job past its own budget, and every job past the total; an ended job frees its bytes', async () => {
    const store = new MemoryStore();
    const stored: WebhookDelivery[] = [];
    const enqueue = store.enqueueWebhook.bind(store);
    store.enqueueWebhook = (d) => {
      stored.push(d);
      return enqueue(d);
    };
    const warnings: unknown[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_m: string, f: unknown) => warnings.push(f) };
    const ew = new EventWebhooks(
      store,
      new ManualClock(1_000),
      logger as unknown as Logger,
      () => {},
      undefined,
      0, // no throttle: every progress is a delivery
      { perJob: 2_000, total: 3_000 },
    );
    const job = (id: string) =>
      makeJob({ id, status: 'IN_PROGRESS', webhook: HOOK, webhookEvents: ['progress', 'completed'] });
    const [a, b, c] = [job('a'), job('b'), job('c')];
    for (const j of [a, b, c]) ew.started(j);
    const bytes = (id: string) => stored.filter((d) => d.jobId === id).reduce((n, d) => n + d.body.length, 0);
    const big = 'x'.repeat(400);
    for (let i = 0; i < 10; i++) ew.progress('a', { i, big });
    await ew.finishing('a');
    expect(bytes('a')).toBeLessThanOrEqual(2_000);
    expect(bytes('a')).toBeGreaterThan(1_000);
    for (let i = 0; i < 10; i++) ew.progress('b', { i, big });
    await ew.finishing('b');
    expect(bytes('a') + bytes('b')).toBeLessThanOrEqual(3_000);
    expect(warnings).toHaveLength(2); // once per job
    ew.ended('a');
    await ew.finishing('a');
    await new Promise((r) => setTimeout(r, 10));
    ew.progress('c', { i: 0, big });
    await ew.finishing('c');
    expect(bytes('c')).toBeGreaterThan(400); // a's bytes were given back
    // The events carry no input, whatever the job's input was.
    expect(stored.every((d) => !('input' in JSON.parse(d.body)))).toBe(true);
  });
});
