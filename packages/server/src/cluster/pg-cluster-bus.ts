import type { Client, Notification } from 'pg';
import { loadPg } from '../store/postgres/connect.js';
import type { PgStore } from '../store/postgres/pg-store.js';
import type { ClusterBus, ClusterMessage } from './types.js';
import type { PresenceSnapshot } from './presence.js';
import type { JobRecord } from '../store/types.js';

/** NOTIFY payloads must stay under 8000 bytes. */
const MAX_PAYLOAD = 7_500;
/** How long a message from another replica counts as proof that others listen (the heartbeat is every 2 s). */
const OTHERS_FRESH_MS = 15_000;
const KIND = { change: 'c', chunk: 's', deleted: 'd' } as const;
const KIND_OF = { c: 'change', s: 'chunk', d: 'deleted' } as const;

/** Chunks (or a job record) larger than this (JSON) go as a bare wake-up: the readers read the store. */
const MAX_CHUNK_DATA = 6_000;

/** Compact wire form of a message (one NOTIFY carries many). */
function encode(m: ClusterMessage): unknown[] {
  if (m.t === 'job') {
    if (m.data) {
      const chunks = JSON.stringify(m.data.chunks);
      if (chunks !== undefined && chunks.length <= MAX_CHUNK_DATA) return ['j', m.id, KIND[m.kind], m.data.seq, m.data.chunks, null, m.data.attempt];
    }
    if (m.job && JSON.stringify(m.job).length <= MAX_CHUNK_DATA) return ['j', m.id, KIND[m.kind], null, null, m.job];
    return ['j', m.id, KIND[m.kind]];
  }
  if (m.t === 'queued') return ['q', m.endpointId];
  if (m.t === 'presence') return m.eps ? ['p', m.replica, m.eps] : ['p', m.replica];
  return ['x', m.id, m.attempt, m.workerId, m.reason];
}

function decode(a: unknown[]): ClusterMessage | undefined {
  const [t, x, y, z, w, v, u] = a as [string, string, unknown, unknown, unknown, unknown, unknown];
  if (t === 'j' && (y === 'c' || y === 's' || y === 'd')) {
    if (typeof z === 'number' && Array.isArray(w) && typeof u === 'number') return { t: 'job', id: x, kind: KIND_OF[y], data: { attempt: u, seq: z, chunks: w } };
    if (v !== null && typeof v === 'object' && (v as JobRecord).id === x) return { t: 'job', id: x, kind: KIND_OF[y], job: v as JobRecord };
    return { t: 'job', id: x, kind: KIND_OF[y] };
  }
  if (t === 'q') return { t: 'queued', endpointId: x };
  if (t === 'p') return y !== null && typeof y === 'object' ? { t: 'presence', replica: x, eps: y as PresenceSnapshot } : { t: 'presence', replica: x };
  if (t === 'x') return { t: 'stop', id: x, attempt: y as number, workerId: z as string, reason: w as 'cancelled' };
  return undefined;
}

/**
 * LISTEN/NOTIFY between replicas on one PostgreSQL database. One dedicated connection listens on the channel
 * `berth_<schema>`; messages published during one event-loop turn go out as one NOTIFY (sent on a pooled
 * connection), so a busy replica sends tens of notifications a second, not thousands. When the listening
 * connection drops it reconnects with backoff and then asks for a resync (waiters re-read, queues are pumped).
 * The store's `onQueued` hook feeds it: a job queued on any replica reaches idle workers on the others at once.
 */
export class PgClusterBus implements ClusterBus {
  readonly replicaId: string;
  private readonly channel: string;
  private client: Client | undefined;
  private outbox: unknown[][] = [];
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
    private readonly store: PgStore,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.replicaId = store.replicaId;
    this.channel = `berth_${store.schema}`;
    store.onQueued = (endpointId) => this.publish({ t: 'queued', endpointId });
  }

  publish(msg: ClusterMessage): void {
    if (this.closed || !this.othersMayListen()) return;
    this.push(encode(msg));
  }

  /**
   * A lone replica (one replica, or the only one alive) sends nothing: notifications cost a statement each. Others
   * are known from the heartbeat, and at once from any message they send (a starting replica says hello).
   */
  private othersMayListen(): boolean {
    return this.store.otherReplicas > 0 || Date.now() - this.othersSeenAt < OTHERS_FRESH_MS;
  }

  private push(encoded: unknown[]): void {
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
      let cur: unknown[][] = [];
      let size = 0;
      for (const m of batch) {
        const len = JSON.stringify(m).length + 1;
        if (size + len > MAX_PAYLOAD && cur.length) {
          payloads.push(JSON.stringify({ r: this.replicaId, m: cur }));
          cur = [];
          size = 0;
        }
        cur.push(m);
        size += len;
      }
      if (cur.length) payloads.push(JSON.stringify({ r: this.replicaId, m: cur }));
      if (payloads.length === 1) await this.store.pool.query('SELECT pg_notify($1, $2)', [this.channel, payloads[0]]);
      else if (payloads.length) await this.store.pool.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [this.channel, payloads]);
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
    let parsed: { r?: string; m?: unknown[][] };
    try {
      parsed = JSON.parse(n.payload) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.r === this.replicaId || !Array.isArray(parsed.m)) return;
    this.stats.received++;
    this.othersSeenAt = Date.now();
    for (const a of parsed.m) {
      const msg = Array.isArray(a) ? decode(a) : undefined;
      if (!msg) continue;
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
    const client = new ClientCtor({ connectionString: this.store.options.url, connectionTimeoutMillis: 5_000, keepAlive: true, application_name: `berth:${this.store.schema}` });
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
    this.push(['h']); // hello: replicas that thought they were alone start sending at once
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
