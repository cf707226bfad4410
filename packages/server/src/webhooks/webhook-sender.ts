import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol';
import type { Store, WebhookAttempt, WebhookDelivery } from '../store/types.js';
import { postWebhook, type PostResult } from './post.js';
import { signatureHeaders } from './signing.js';
import { retryDelay, type ResolvedWebhookOptions } from './webhook-options.js';
import { eventOf } from './delivery.js';

/** Where an event falls among the deliveries of one job made in the same millisecond. */
const EVENT_RANK = { start: 0, progress: 1, output: 1, completed: 2 } as const;

/** Claimed deliveries by creation time, a job's `start` first and its `completed` last on ties. */
function inJobOrder(a: WebhookDelivery, b: WebhookDelivery): number {
  return a.createdAt - b.createdAt || EVENT_RANK[eventOf(a.id)] - EVENT_RANK[eventOf(b.id)];
}

/** Deliveries taken from the outbox per pass. */
const BATCH = 32;
/** Attempts in flight at once; more due deliveries wait in the outbox (not in memory) until one finishes. */
const MAX_IN_FLIGHT = 64;

/**
 * Delivers the store's webhook outbox: takes due deliveries (leased, so a crash mid-attempt retries after the
 * lease), POSTs each (one at a time per job, in order; `webhook-event` names its event), records the attempt, and
 * schedules the next one `retryDelay()` later (constant or exponential with a cap) until a 2xx or `attempts` are
 * used up (a target refused by the address policy is not retried). Polls every `pollMs` (this is
 * also how a restarted server picks up what the previous one left) and runs at once when `kick()` says a job
 * just finished.
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly inflight = new Set<Promise<void>>();
  /** Per job, its last attempt started: the next delivery of the same job waits for it (events arrive in order). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly opts: ResolvedWebhookOptions,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Called once per attempt with its outcome (metrics). */
    private readonly onAttempt: (outcome: 'delivered' | 'retrying' | 'failed') => void = () => {},
  ) {}

  /** Starts polling (and delivers what is already due). */
  start(): void {
    if (!this.opts.enabled) return;
    this.kick();
  }

  /** Runs a pass now (a job with a webhook just reached a terminal state). */
  kick(): void {
    if (!this.opts.enabled || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err) => this.logger.error('webhook pass failed', { err: String(err) }))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        } else this.schedule(this.opts.pollMs);
      });
  }

  /** Wakes up in `ms` unless a sooner wake-up is already set. */
  private schedule(ms: number): void {
    if (this.stopped || ms <= 0 || !Number.isFinite(ms)) return;
    const at = performance.now() + ms;
    if (this.timer && at >= this.wakeAt) return;
    clearTimeout(this.timer);
    this.wakeAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    for (;;) {
      const room = Math.min(BATCH, MAX_IN_FLIGHT - this.inflight.size);
      if (room <= 0 || this.stopped) return; // an attempt that ends kicks another pass
      const now = this.clock.now();
      // The lease covers an attempt that waits for the earlier deliveries of its job claimed with it.
      const due = await this.store.claimWebhooks(now, room, now + (this.opts.timeoutMs + 5_000) * 2);
      due.sort(inJobOrder);
      for (const d of due) {
        // One attempt at a time per job, in claim order: a job's start, progress, output and completed arrive in
        // the order they happened (a failed one retried later may arrive after newer ones).
        const before = this.chains.get(d.jobId);
        const run = () =>
          this.attempt(d).catch((err: unknown) =>
            this.logger.error('webhook attempt not recorded', { webhookId: d.id, err: String(err) }),
          );
        const p: Promise<void> = (before ? before.then(run) : run()).finally(() => {
          this.inflight.delete(p);
          if (this.chains.get(d.jobId) === p) this.chains.delete(d.jobId);
          if (this.inflight.size === MAX_IN_FLIGHT - 1) this.kick(); // there may be a backlog
        });
        this.chains.set(d.jobId, p);
        this.inflight.add(p);
      }
      if (due.length < room) return;
    }
  }

  private async attempt(d: WebhookDelivery): Promise<void> {
    const startedAt = this.clock.now();
    const t0 = performance.now();
    const headers = this.opts.key
      ? signatureHeaders(this.opts.key, d.id, Math.floor(Date.now() / 1000), d.body)
      : { 'webhook-id': d.id };
    headers['webhook-event'] = eventOf(d.id);
    let r: PostResult;
    try {
      r = await postWebhook(d.url, d.body, headers, this.opts);
    } catch (err) {
      r = { error: String(err) };
    }
    const attempt: WebhookAttempt = { at: startedAt, durationMs: Math.round(performance.now() - t0) };
    if (r.status !== undefined) attempt.status = r.status;
    if (r.error !== undefined) attempt.error = r.error;
    const ok = r.status !== undefined && r.status >= 200 && r.status < 300;
    const n = d.attempts.length + 1;
    const delay = retryDelay(this.opts, n);
    const next = ok || r.refused || n >= this.opts.attempts ? null : this.clock.now() + delay;
    const log = { jobId: d.jobId, webhookId: d.id, event: eventOf(d.id), attempt: n, status: r.status, error: r.error };
    if (ok) this.logger.info('webhook delivered', log);
    else if (next === null) this.logger.warn('webhook failed, no attempts left', log);
    else this.logger.info('webhook attempt failed, will retry', { ...log, retryInMs: delay });
    this.onAttempt(ok ? 'delivered' : next === null ? 'failed' : 'retrying');
    await this.store.recordWebhookAttempt(d.id, attempt, next);
    if (next !== null) this.schedule(Math.min(this.opts.pollMs || Infinity, delay + 1));
  }

  /** Stops polling and waits (bounded) for attempts in flight to be recorded. */
  async stop(waitMs = 2_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    const all = Promise.allSettled([...this.inflight, this.running]);
    await Promise.race([all, new Promise((r) => setTimeout(r, waitMs).unref())]);
  }
}
