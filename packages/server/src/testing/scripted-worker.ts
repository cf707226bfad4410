import { randomUUID } from 'node:crypto';
import {
  decodeServerMessage,
  PROTOCOL_VERSION,
  WORKER_WS_PATH,
  type HelloMessage,
  type ServerMessage,
  type WorkerMessage,
} from '@berth/protocol';
import WebSocket from 'ws';

/**
 * A worker scripted by a test over a real WebSocket: it sends the messages the test gives it (`send`, any JSON, so
 * a test can send wrong ones too) and records what the control plane sends (`received`, `next`, `count`).
 *
 * @example
 * const w = await ScriptedWorker.connect(url, workerToken, { endpointId: 'echo', concurrency: 4 });
 * const job = await w.next('job.assign');
 * w.send({ type: 'job.complete', id: job.id, attempt: job.attempt, output: { ok: true } });
 */
export class ScriptedWorker {
  readonly received: ServerMessage[] = [];
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const r = decodeServerMessage(data.toString());
      if (r.ok) this.received.push(r.value);
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /**
   * Connects to the control plane at `url` (http or https) with a worker token and sends `hello`: its fields
   * default to a fresh worker id, concurrency 1, streaming, no jobs held.
   */
  static async connect(
    url: string,
    token: string,
    hello: Partial<HelloMessage> & { endpointId: string },
  ): Promise<ScriptedWorker> {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + WORKER_WS_PATH, {
      headers: { authorization: `Bearer ${token}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    const w = new ScriptedWorker(ws);
    w.send({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      workerId: `scripted-${randomUUID().slice(0, 8)}`,
      concurrency: 1,
      stream: true,
      inflight: [],
      ...hello,
    });
    return w;
  }

  send(msg: WorkerMessage | Record<string, unknown>): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** Waits for the n-th (default: next unseen) message of a type, bounded by `timeoutMs`. */
  async next<T extends ServerMessage['type']>(type: T, timeoutMs = 5000): Promise<Extract<ServerMessage, { type: T }>> {
    const seen = this.consumed.get(type) ?? 0;
    const until = Date.now() + timeoutMs;
    for (;;) {
      const all = this.received.filter((m) => m.type === type);
      if (all.length > seen) {
        this.consumed.set(type, seen + 1);
        return all[seen] as Extract<ServerMessage, { type: T }>;
      }
      if (this.closed) throw new Error(`socket closed while waiting for ${type}`);
      const left = until - Date.now();
      if (left <= 0)
        throw new Error(`no ${type} within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((m) => m.type))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
  private consumed = new Map<string, number>();

  count(type: ServerMessage['type']): number {
    return this.received.filter((m) => m.type === type).length;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const done = new Promise<void>((r) => this.ws.once('close', () => r()));
    this.ws.close();
    await done;
  }
}
