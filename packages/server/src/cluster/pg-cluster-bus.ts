import type { Client, Notification } from 'pg';
import { loadPg } from '../store/postgres/connect.js';
import type { JobStatus } from '@berth/protocol';
import type { PgJobPath } from '../store/postgres/job-path.js';
import type { PgStreams } from '../store/postgres/pg-streams.js';
import type { ClusterBus, ClusterMessage } from './types.js';
import { decodePayload, encodeLine, header } from './wire.js';

/** NOTIFY payloads must stay under 8000 bytes. */
const MAX_PAYLOAD = 7_500;
/** How long a message from another replica counts as proof that others listen (the heartbeat is every 2 s). */
const OTHERS_FRESH_MS = 15_000;

/** What the bus needs of the PostgreSQL store (`PgStore`), which creates it with itself. */
interface BusStore {
  readonly replicaId: string;
  readonly schema: string;
  readonly otherReplicas: number;
  readonly options: { readonly url: string };
  onQueued: ((endpointId: string) => void) | undefined;
  readonly jobs: Pick<PgJobPath, 'eventNotice'>;
  readonly streams: Pick<PgStreams, 'notice'>;
  takeNoticed(id: string, attempt: number, what: { seq: number; count: number } | JobStatus): boolean;
  notify(channel: string, payloads: string[]): Promise<void>;
  queuedElsewhere(endpointId?: string): void;
}

/**
 * LISTEN/NOTIFY between replicas on one PostgreSQL database. One dedicated connection listens on the channel
 * `berth_<schema>`; messages published during one event-loop turn go out as one NOTIFY (sent on a pooled
 * connection), so a busy replica sends tens of notifications a second, not thousands. Payloads are lines (`wire.ts`): a replica skips its own payloads and
 * the events of jobs it has no waiter for without parsing them. When the listening
 * connection drops it reconnects with backoff and then asks for a resync (waiters re-read, queues are pumped).
 * The store's `onQueued` hook feeds it: a job queued on any replica reaches idle workers on the others at once.
 */
export class PgClusterBus implements ClusterBus {
  readonly replicaId: string;
  private readonly channel: string;
  private readonly header: string;
  private client: Client | undefined;
  private outbox: string[] = [];
  private flushing = false;
  private closed = false;
  private connectedOnce = false;
  private othersSeenAt = 0;
  private retryMs = 100;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly handlers: ((m: ClusterMessage) => void)[] = [];
  private readonly resyncs: (() => void)[] = [];
  /** Notifications sent and received (for tests and metrics). */
  readonly stats = { sent: 0, received: 0, reconnects: 0 };

  constructor(
    private readonly store: BusStore,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.replicaId = store.replicaId;
    this.channel = `berth_${store.schema}`;
    this.header = header(this.replicaId);
    store.onQueued = (endpointId) => this.publish({ t: 'queued', endpointId });
    // Batched claims send the claimed jobs' change events (with their records) in their statements, and /runsync
    // inserts their 'queued' messages.
    store.jobs.eventNotice = () =>
      this.closed || !this.othersMayListen() || this.header.length > 1_000
        ? undefined
        : { channel: this.channel, header: this.header };
    store.streams.notice = (id, attempt, seq, chunks) => {
      if (this.closed || !this.othersMayListen()) return undefined;
      const payload = `${this.header}\n${encodeLine({ t: 'job', id, kind: 'chunk', data: { attempt, seq, chunks } })}`;
      return Buffer.byteLength(payload) <= MAX_PAYLOAD ? { channel: this.channel, payload } : undefined;
    };
  }

  publish(msg: ClusterMessage): void {
    // Chunks whose append carried their notification (`PgStreams.notice`), and records whose claim did
    // (`PgJobPath.eventNotice`), are on their way already.
    if (msg.t === 'job' && this.alreadySent(msg)) return;
    if (this.closed || !this.othersMayListen()) return;
    this.push(encodeLine(msg));
  }

  private alreadySent(msg: Extract<ClusterMessage, { t: 'job' }>): boolean {
    if (msg.data)
      return this.store.takeNoticed(msg.id, msg.data.attempt, { seq: msg.data.seq, count: msg.data.chunks.length });
    return (
      msg.kind === 'change' && msg.job !== undefined && this.store.takeNoticed(msg.id, msg.job.attempt, msg.job.status)
    );
  }

  /** Set by `wireCluster`: whether this replica has waiters for a job (others' events of other jobs are skipped). */
  interestedIn: ((jobId: string) => boolean) | undefined;

  /**
   * A lone replica (one replica, or the only one alive) sends nothing: notifications cost a statement each. Others
   * are known from the heartbeat, and at once from any message they send (a starting replica says hello).
   */
  private othersMayListen(): boolean {
    return this.store.otherReplicas > 0 || Date.now() - this.othersSeenAt < OTHERS_FRESH_MS;
  }

  private push(encoded: string): void {
    this.outbox.push(encoded);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    const batch = this.outbox;
    this.outbox = [];
    try {
      const payloads: string[] = [];
      const headBytes = Buffer.byteLength(this.header);
      let cur = this.header;
      let bytes = headBytes;
      for (const line of batch) {
        const n = Buffer.byteLength(line) + 1;
        if (headBytes + n > MAX_PAYLOAD) {
          // Alone too large for a notification (a presence report of very many endpoints): it would fail the whole
          // statement, so it is dropped (the others' view of this replica ages out; the store stays the truth).
          this.onError(new Error(`cluster message of ${n} bytes dropped: larger than a notification`));
          continue;
        }
        if (bytes > headBytes && bytes + n > MAX_PAYLOAD) {
          payloads.push(cur);
          cur = this.header;
          bytes = headBytes;
        }
        cur += `\n${line}`;
        bytes += n;
      }
      if (cur.length > this.header.length) payloads.push(cur);
      await this.store.notify(this.channel, payloads);
      this.stats.sent += payloads.length;
    } catch (err) {
      this.onError(err); // best effort: the pump timer and the sweep catch up
    } finally {
      this.flushing = false;
      if (this.outbox.length && !this.closed) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    }
  }

  onMessage(fn: (msg: ClusterMessage) => void): void {
    this.handlers.push(fn);
  }

  onResync(fn: () => void): void {
    this.resyncs.push(fn);
  }

  private receive(n: Notification): void {
    if (!n.payload) return;
    const msgs = decodePayload(n.payload, this.header, this.interestedIn ?? (() => true));
    if (!msgs) return;
    this.stats.received++;
    this.othersSeenAt = Date.now();
    for (const msg of msgs) {
      if (msg.t === 'queued') this.store.queuedElsewhere(msg.endpointId); // before the pump, so its claim queries
      for (const fn of this.handlers) fn(msg);
    }
  }

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const { Client: ClientCtor } = loadPg();
    const client = new ClientCtor({
      connectionString: this.store.options.url,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      application_name: `berth:${this.store.schema}`,
    });
    client.on('notification', (n) => this.receive(n));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('listen connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      if (!this.connectedOnce) throw err;
      this.lost(client, err);
      return;
    }
    this.client = client;
    this.retryMs = 100;
    this.push(encodeLine({ t: 'hello' })); // hello: replicas that thought they were alone start sending at once
    if (this.connectedOnce) {
      this.stats.reconnects++;
      this.store.queuedElsewhere(); // notifications may have been missed: every queue may hold jobs
      for (const fn of this.resyncs) fn();
    }
    this.connectedOnce = true;
  }

  private lost(client: Client, err: unknown): void {
    if (this.closed || this.retryTimer) return;
    if (this.client === client) this.client = undefined;
    else if (this.client !== undefined) return;
    this.onError(err);
    client.removeAllListeners('end');
    client.end().catch(() => {});
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 2_000);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    if (c) {
      c.removeAllListeners('end');
      await c.end().catch(() => {});
    }
  }
}
