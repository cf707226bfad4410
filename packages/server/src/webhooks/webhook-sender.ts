import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol/log';
import type { Store, WebhookAttempt, WebhookDelivery } from '../store/types.js';
import { postWebhook, type PostResult } from './post.js';
import { signatureHeaders } from './signing.js';
import { retryDelay, type ResolvedWebhookOptions } from './webhook-options.js';
import { eventOf } from '../store/webhook-delivery.js';

/** Where an event falls among the deliveries of one job made in the same millisecond. */
const EVENT_RANK = { start: 0, progress: 1, output: 1, completed: 2 } as const;

/** Claimed deliveries by creation time, a job's `start` first and its `completed` last on ties. */
function inJobOrder(a: WebhookDelivery, b: WebhookDelivery): number {
  return a.createdAt - b.createdAt || EVENT_RANK[eventOf(a.id)] - EVENT_RANK[eventOf(b.id)];
}

/** Deliveries taken from the outbox per claim. */
const BATCH = 32;
/** Attempts on the wire at once. */
const MAX_IN_FLIGHT = 64;
/** Attempts on the wire at once to one target host: a slow receiver cannot take every slot. */
const MAX_PER_HOST = 16;
/** Claimed deliveries held in memory (on the wire or waiting for their job or host); more wait in the outbox. */
const MAX_HELD = 128;
/** Room an attempt needs left on its lease beyond `timeoutMs` (recording it included), ms. */
const LEASE_MARGIN_MS = 5_000;

/** A claimed delivery this process holds, with the lease its last claim took. */
interface Held {
  d: WebhookDelivery;
  leaseUntil: number;
  host: string;
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/**
 * Delivers the store's webhook outbox. The store hands out each job's deliveries one at a time, oldest first
 * (its later ones wait until it is delivered or failed for good), and replaces a job's undelivered `progress` and
 * `output` with newer ones, so a slow receiver sees the newest state, not a backlog. The sender claims due
 * deliveries (leased: a crash mid-attempt retries after the lease), POSTs each (`webhook-event` names its event),
 * records the attempt and schedules the next one `retryDelay()` later (constant or exponential with a cap) until a
 * 2xx or `attempts` are used up (a target refused by the address policy is not retried).
 *
 * Fair sharing: a delivery takes one of `MAX_IN_FLIGHT` slots only while its attempt is on the wire, a target
 * host gets at most `MAX_PER_HOST` of them, jobs take turns, and claimed deliveries waiting for a slot stay in
 * memory (at most `MAX_HELD`). A delivery this process holds that a claim returns again (its lease ran out while
 * it waited) is not added twice: the claim renewed its lease. An attempt only starts with `timeoutMs` + 5 s left
 * on its lease; one that waited too long is let go and claimed again later, never sent twice at once. Polls every
 * `pollMs` (also how a restarted server picks up what the previous one left) and runs at once on `kick()`.
 */
export class WebhookSender {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly inflight = new Set<Promise<void>>();
  private readonly held = new Map<string, Held>();
  /** Per job, its held deliveries in order; the first is on the wire when the job is in `busy`. Jobs take turns. */
  private readonly queues = new Map<string, Held[]>();
  private readonly busy = new Set<string>();
  private readonly perHost = new Map<string, number>();

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

  /** Runs a pass now (a delivery was just stored). */
  kick(): void {
    if (!this.opts.enabled || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err) => this.logger.error('webhook pass failed', { err }))
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
      const room = Math.min(BATCH, MAX_HELD - this.held.size);
      if (room <= 0 || this.stopped) break; // an attempt that ends kicks another pass
      const now = this.clock.now();
      const leaseUntil = now + (this.opts.timeoutMs + LEASE_MARGIN_MS) * 2;
      const due = await this.store.claimWebhooks(now, room, leaseUntil);
      let added = 0;
      for (const d of due) {
        const known = this.held.get(d.id);
        if (known)
          known.leaseUntil = leaseUntil; // held here already (waiting): the claim renewed its lease
        else {
          this.hold({ d, leaseUntil, host: hostOf(d.url) });
          added++;
        }
      }
      this.pump();
      if (due.length < room || added === 0) break;
    }
    this.pump();
  }

  private hold(h: Held): void {
    this.held.set(h.d.id, h);
    const q = this.queues.get(h.d.jobId);
    if (!q) this.queues.set(h.d.jobId, [h]);
    else {
      q.push(h);
      // The store hands out a job's deliveries of one time together: start first, completed last.
      const first = this.busy.has(h.d.jobId) ? 1 : 0;
      const rest = q.splice(first).sort((a, b) => inJobOrder(a.d, b.d));
      q.push(...rest);
    }
  }

  /** Starts the attempts that may start: one per job, `MAX_PER_HOST` per host, `MAX_IN_FLIGHT` in all. */
  private pump(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    for (const [jobId, q] of this.queues) {
      if (this.inflight.size >= MAX_IN_FLIGHT) return;
      if (this.busy.has(jobId)) continue;
      const h = q[0]!;
      if ((this.perHost.get(h.host) ?? 0) >= MAX_PER_HOST) continue;
      if (h.leaseUntil - now < this.opts.timeoutMs + LEASE_MARGIN_MS) {
        // Waited too long for a slot: let the job's deliveries go; a later claim takes them again, in order.
        for (const x of q) this.held.delete(x.d.id);
        this.queues.delete(jobId);
        continue;
      }
      this.launch(jobId, h);
    }
  }

  private launch(jobId: string, h: Held): void {
    this.busy.add(jobId);
    this.perHost.set(h.host, (this.perHost.get(h.host) ?? 0) + 1);
    const p: Promise<void> = this.attempt(h.d)
      .catch((err: unknown) => this.logger.error('webhook attempt not recorded', { webhookId: h.d.id, err }))
      .finally(() => {
        this.inflight.delete(p);
        this.busy.delete(jobId);
        this.held.delete(h.d.id);
        const left = (this.perHost.get(h.host) ?? 1) - 1;
        if (left > 0) this.perHost.set(h.host, left);
        else this.perHost.delete(h.host);
        const q = this.queues.get(jobId);
        this.queues.delete(jobId);
        q?.shift();
        if (q?.length) this.queues.set(jobId, q); // to the back of the line: jobs take turns
        // The job's next delivery is claimable now; the outbox may hold more than fitted in memory.
        this.kick();
        this.pump();
      });
    this.inflight.add(p);
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
