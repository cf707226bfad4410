import type { WebhookEvent } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import type { Clock } from '../clock.js';
import type { JobRecord, Store, WebhookDelivery } from '../store/types.js';
import { newEventDelivery } from '../store/webhook-delivery.js';
import { EventThrottle, realSchedule, type Schedule } from './event-throttle.js';

/** Least time between two `progress` (or two `output`) deliveries of one job, ms. */
export const EVENT_THROTTLE_MS = 500;
/** A tracked job whose end this process never saw (finished on another replica) is forgotten this long after its deadline. */
const FORGET_AFTER_MS = 60_000;
/**
 * Bytes of `progress` and `output` bodies one job may put in the outbox; past them its later ones are dropped (the
 * `completed` delivery still carries the output). Bounds what an undelivered job's merged `output` can grow to.
 */
export const MAX_EVENT_BYTES_PER_JOB = 4 * 1024 * 1024;
/** Bytes of `progress` and `output` bodies the running jobs this process tracks may put in the outbox in all. */
const MAX_EVENT_BYTES_TOTAL = 256 * 1024 * 1024;

/** What `progress` and `output` deliveries may add to the outbox: per job, and for all the jobs tracked at once. */
interface EventBudget {
  perJob: number;
  total: number;
}

type Tracked = {
  job: JobRecord & { webhook: string };
  progress?: EventThrottle<unknown>;
  output?: EventThrottle<unknown[]>;
  /** The job's deliveries being stored, in order: `finishing` waits for them. */
  writes: Promise<void>;
  /** Bytes of its `progress` and `output` bodies stored so far (`MAX_EVENT_BYTES_PER_JOB`). */
  bytes: number;
  /** Its events went over a budget (warned once): its later `progress` and `output` are dropped. */
  over: boolean;
};

/**
 * The non-terminal webhook events (`start`, `progress`, `output`) of jobs whose request named `webhookEvents`
 * (docs/webhooks.md). The process that dispatched a job hears its worker's reports, so it tracks the job from
 * its start to its end: `progress` and `output` go through an `EventThrottle` each (at most one delivery per
 * 500 ms per job, the last one always sent; an `output` delivery carries every chunk since the previous one), and
 * each delivery is written to the store's outbox in order, before the job's terminal state is (`finishing`), so
 * the sender sends a job's events in order. Jobs without `webhookEvents` cost one map lookup per report.
 */
export class EventWebhooks {
  private readonly jobs = new Map<string, Tracked>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** A delivery was stored: the sender should look now. */
    private readonly kick: () => void,
    private readonly schedule: Schedule = realSchedule,
    private readonly intervalMs = EVENT_THROTTLE_MS,
    private readonly budget: EventBudget = { perJob: MAX_EVENT_BYTES_PER_JOB, total: MAX_EVENT_BYTES_TOTAL },
  ) {}

  /** Bytes of `progress` and `output` bodies of the jobs tracked now (`budget.total`). */
  private total = 0;

  /** Whether `id` is tracked (a report about it must wait for `finishing` before its terminal write). */
  has(id: string): boolean {
    return this.jobs.size > 0 && this.jobs.has(id);
  }

  /** A worker took `job` (the record as claimed): its `start` delivery, and tracking for the other events. */
  started(job: JobRecord): void {
    const t = this.track(job);
    if (t && job.webhookEvents!.includes('start'))
      this.enqueue(t, newEventDelivery(t.job, 'start', {}, this.clock.now()));
  }

  /** Tracks a running job without a `start` delivery (a reconnecting worker's job adopted by this process). */
  track(job: JobRecord): Tracked | undefined {
    if (job.webhook === undefined || job.webhookEvents === undefined) return undefined;
    if (job.webhookEvents.length === 1 && job.webhookEvents[0] === 'completed') return undefined;
    this.forgetStale();
    // The input is not kept: no event but completed (written by the store) carries it.
    const t: Tracked = {
      job: { ...job, input: {}, webhook: job.webhook },
      writes: Promise.resolve(),
      bytes: 0,
      over: false,
    };
    const wants = (e: WebhookEvent) => job.webhookEvents!.includes(e);
    if (wants('progress'))
      t.progress = new EventThrottle<unknown>(
        this.intervalMs,
        this.clock,
        (_held, next) => next,
        (value, at) => this.enqueue(t, newEventDelivery({ ...t.job, progress: value }, 'progress', {}, at)),
        this.schedule,
      );
    if (wants('output'))
      t.output = new EventThrottle<unknown[]>(
        this.intervalMs,
        this.clock,
        (held, next) => (held ? [...held, ...next] : next),
        (chunks, at) => {
          const stream = chunks.map((output) => ({ output }));
          this.enqueue(t, newEventDelivery(t.job, 'output', { stream }, at));
        },
        this.schedule,
      );
    const before = this.jobs.get(job.id);
    if (before) this.total -= before.bytes; // a new attempt of the job replaces the one tracked
    this.jobs.set(job.id, t);
    return t;
  }

  /** The job's worker reported progress (stored). */
  progress(id: string, value: unknown): void {
    if (this.jobs.size > 0) this.jobs.get(id)?.progress?.push(value);
  }

  /** Stream chunks of the job were stored. */
  output(id: string, chunks: unknown[]): void {
    if (this.jobs.size > 0 && chunks.length > 0) this.jobs.get(id)?.output?.push(chunks);
  }

  /** The job is about to be made terminal: held events are sent now and every delivery of it is stored. */
  async finishing(id: string): Promise<void> {
    const t = this.jobs.get(id);
    if (!t) return;
    t.progress?.flush();
    t.output?.flush();
    await t.writes;
  }

  /** The job reached a terminal state: anything still held is sent, then it is forgotten. */
  ended(id: string): void {
    const t = this.jobs.size > 0 ? this.jobs.get(id) : undefined;
    if (!t) return;
    void this.finishing(id).finally(() => {
      if (this.jobs.get(id) === t) this.forget(id, t); // not a later attempt's (a /retry started it again)
    });
  }

  private enqueue(t: Tracked, d: WebhookDelivery): void {
    if (!d.id.includes('_start_')) {
      if (t.over) return;
      const n = d.body.length;
      if (t.bytes + n > this.budget.perJob || this.total + n > this.budget.total) {
        t.over = true;
        this.logger.warn("webhook events over their budget: this job's later progress and output are not sent", {
          jobId: d.jobId,
          jobBytes: t.bytes,
          allBytes: this.total,
          budget: this.budget,
        });
        return;
      }
      t.bytes += n;
      this.total += n;
    }
    t.writes = t.writes
      .then(() => this.store.enqueueWebhook(d))
      .then(() => this.kick())
      .catch((err: unknown) => this.logger.error('webhook event not stored', { jobId: d.jobId, webhookId: d.id, err }));
  }

  private forgetStale(): void {
    const before = this.clock.now() - FORGET_AFTER_MS;
    for (const [id, t] of this.jobs)
      if (t.job.executionDeadline !== undefined && t.job.executionDeadline < before) this.forget(id, t);
  }

  private forget(id: string, t: Tracked): void {
    this.jobs.delete(id);
    this.total -= t.bytes;
  }
}
