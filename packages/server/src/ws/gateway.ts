import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  BerthError,
  PROTOCOL_VERSION,
  WORKER_WS_PATH,
  decodeWorkerMessage,
  ENDPOINT_ID_RE,
  toErrorBody,
  type DecodeResult,
  type HelloMessage,
  type WorkerMessage,
  type WsErrorCode,
} from '@berth/protocol';
import { WebSocketServer, type WebSocket } from 'ws';
import type { CoreContext } from '../jobs/context.js';
import type { Dispatcher } from '../jobs/dispatcher.js';
import type { WorkerReports } from '../jobs/worker-reports.js';
import { mayServe, type WorkerAuth, type WorkerIdentity } from '../keys/worker-auth.js';
import type { WorkerSession } from '../workers/worker-session.js';
import { WebSocketSession } from './ws-session.js';
import { ConnectionGuard } from './connection-guard.js';
import { SerialQueue } from './serial-queue.js';
import { decodeBigFrame } from './big-frame.js';
import { BIG_JSON_BYTES } from '../http/json-pool.js';
import { StoreUnavailableError } from '../errors.js';

const HELLO_TIMEOUT_MS = 10_000;

export interface GatewayDeps {
  ctx: CoreContext;
  dispatcher: Dispatcher;
  /** Applies what workers report. */
  reports: WorkerReports;
  /** Worker credentials: shared tokens and stored per-endpoint worker tokens. */
  auth: WorkerAuth;
  /** Whether an endpoint is served; `register` adds one announced by a worker (when allowed). */
  hasEndpoint(id: string): boolean;
  register(id: string, identity: WorkerIdentity): boolean;
}

/**
 * The worker side: authenticates the token before the upgrade completes, expects `hello` first, then feeds
 * each decoded message to `WorkerReports`. Heartbeats: one timer pings every worker each `heartbeatMs` and drops
 * those silent for 3 intervals (their jobs go to a lease, then back to the queue).
 */
export class Gateway {
  // Frames over the limit close the connection (1009) while arriving, before they are buffered whole.
  private readonly wss: WebSocketServer;
  private readonly timer: NodeJS.Timeout;
  private readonly sockets = new Set<WebSocket>();

  constructor(private readonly deps: GatewayDeps) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: deps.ctx.options.maxWorkerFrameBytes });
    this.timer = setInterval(() => this.heartbeat(), deps.ctx.options.heartbeatMs);
    this.timer.unref();
  }

  /** Handles an HTTP upgrade; answers 404 / 401 itself for the wrong path or token. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    // The same JSON error body as every HTTP answer (`toErrorBody`), on the raw socket before any upgrade.
    const refuse = (err: BerthError) => {
      const { status, body } = toErrorBody(err);
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(body)}`,
      );
    };
    if (path !== WORKER_WS_PATH) return refuse(new BerthError('route_not_found', 'Not Found'));
    this.deps.auth.authenticateWorker(req.headers.authorization).then(
      (identity) => {
        if (socket.destroyed) return;
        if (!identity) return refuse(new BerthError('unauthorized', 'Unauthorized'));
        this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, identity));
      },
      (err) => {
        this.deps.ctx.logger.error('worker authentication failed', { err });
        refuse(new BerthError('unavailable', 'credential store unavailable'));
      },
    );
  }

  private onConnection(ws: WebSocket, identity: WorkerIdentity): void {
    const { logger } = this.deps.ctx;
    this.sockets.add(ws);
    let session: WebSocketSession | undefined;
    const failed = (err: unknown): void => {
      logger.error('worker message failed', { workerId: session?.workerId, err });
      // The store is unreachable: drop the connection so the worker reconnects later and sends its unacknowledged
      // results again (1013: try again later).
      if (err instanceof StoreUnavailableError) ws.close(1013, 'store unavailable');
    };
    // Messages of one worker are applied in order.
    const queue = new SerialQueue(failed);
    const helloTimer = setTimeout(() => this.refuse(ws, 'invalid_message', 'no hello within 10 s'), HELLO_TIMEOUT_MS);
    const guard = new ConnectionGuard(this.deps.ctx.options.workerMessagesPerSecond, logger, () => session?.workerId);
    const applyDecoded = (decoded: DecodeResult<WorkerMessage>): Promise<void> | void => {
      if (!decoded.ok) {
        if (guard.malformedFrame(decoded.error))
          ws.send(JSON.stringify({ type: 'error', code: 'invalid_message', message: decoded.error }));
        return;
      }
      const msg = decoded.value;
      if (session) {
        const applying = this.deps.reports.onWorkerMessage(session, msg);
        // A result does not hold the worker's next messages back while its store write commits: the results of
        // one read then share one commit (SQLite) instead of taking one each. Its own order is kept inside
        // `onWorkerMessage` (its stream chunks first; the ack after the write).
        if (msg.type !== 'job.complete' && msg.type !== 'job.fail') return applying;
        applying.catch(failed);
        return;
      }
      if (msg.type !== 'hello') return this.refuse(ws, 'invalid_message', 'the first message must be hello');
      clearTimeout(helloTimer);
      return this.onHello(ws, msg, identity).then((s) => {
        session = s;
      });
    };
    ws.on('message', (data, isBinary) => {
      const now = performance.now();
      if (session) session.lastSeen = now;
      if (!isBinary && Buffer.isBuffer(data) && data.length >= BIG_JSON_BYTES) {
        // A big frame (a 19 MB result) is parsed on a pool thread, its output kept as received (`RawJson`), and
        // applied in its place among this worker's messages.
        const decoding = decodeBigFrame(data);
        queue.push(async () => {
          const decoded = await decoding;
          const wait = decoded.ok && session?.takeResultPass(decoded.value) ? 0 : guard.admit(performance.now());
          if (wait > 0) {
            ws.pause();
            await new Promise((r) => setTimeout(r, wait - performance.now()));
            ws.resume();
          }
          await applyDecoded(decoded);
        });
        return;
      }
      const decoded = decodeWorkerMessage(isBinary ? '' : data.toString());
      // Over the message rate: stop reading and apply this message later (nothing is dropped). The result of a job
      // this worker holds is not counted: its assign paid for it (`WebSocketSession.takeResultPass`).
      const notBefore = decoded.ok && session?.takeResultPass(decoded.value) ? 0 : guard.admit(now);
      if (notBefore > 0) ws.pause();
      const apply = () => applyDecoded(decoded);
      if (notBefore <= 0) return queue.push(apply);
      queue.push(async () => {
        await new Promise((r) => setTimeout(r, notBefore - performance.now()));
        ws.resume();
        await apply();
      });
    });
    ws.on('error', (err) => logger.debug('worker socket error', { workerId: session?.workerId, err }));
    ws.on('close', () => {
      clearTimeout(helloTimer);
      guard.close();
      this.sockets.delete(ws);
      queue.push(() =>
        session
          ? this.retire(session, 'socket closed').catch((err) => logger.error('worker close failed', { err }))
          : undefined,
      );
    });
  }

  private refuse(ws: WebSocket, code: WsErrorCode, message: string): void {
    this.deps.ctx.logger.warn('worker refused', { code, message });
    ws.send(JSON.stringify({ type: 'error', code, message }));
    ws.close(4000, code);
  }

  private async onHello(
    ws: WebSocket,
    hello: HelloMessage,
    identity: WorkerIdentity,
  ): Promise<WebSocketSession | undefined> {
    const { ctx, dispatcher, reports } = this.deps;
    if (hello.protocol !== PROTOCOL_VERSION) {
      this.refuse(
        ws,
        'protocol_mismatch',
        `protocol ${hello.protocol} is not supported; this control plane speaks ${PROTOCOL_VERSION}`,
      );
      return undefined;
    }
    if (!mayServe(identity, hello.endpointId)) {
      this.refuse(
        ws,
        'unauthorized',
        `worker token ${identity.credentialId} may not serve endpoint ${hello.endpointId.slice(0, 80)}`,
      );
      return undefined;
    }
    if (
      !ENDPOINT_ID_RE.test(hello.endpointId) ||
      (!this.deps.hasEndpoint(hello.endpointId) && !this.deps.register(hello.endpointId, identity))
    ) {
      this.refuse(ws, 'unknown_endpoint', `endpoint ${hello.endpointId} is not served here`);
      return undefined;
    }
    const old = ctx.registry.get(hello.workerId);
    if (old && (old.endpointId !== hello.endpointId || old.credentialId !== identity.credentialId)) {
      // Only the same worker (same endpoint, same credential) may replace a live connection: anyone else is refused
      // and the running worker keeps its connection and its jobs.
      this.refuse(
        ws,
        'duplicate_worker',
        `worker id ${hello.workerId} is connected already (another endpoint or credential); pick another BERTH_WORKER_ID`,
      );
      return undefined;
    }
    if (old) {
      ctx.logger.warn('worker id reconnected: dropping the older connection', { workerId: hello.workerId });
      await this.retire(old, 'replaced by a new connection');
      old.terminate();
    }
    const session = new WebSocketSession(ws, hello, performance.now(), identity.credentialId);
    const stale = await reports.adopt(session, hello.inflight);
    if (ws.readyState !== ws.OPEN) {
      await this.retire(session, 'closed during hello');
      return undefined;
    }
    ctx.registry.add(session);
    session.send({
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      workerId: session.workerId,
      heartbeatMs: ctx.options.heartbeatMs,
      stale,
      acks: true,
      blobs: true, // big outputs are uploaded over HTTP whatever the store (blobs/blob-routes.ts)
    });
    ctx.logger.info('worker connected', {
      workerId: session.workerId,
      endpointId: session.endpointId,
      concurrency: session.concurrency,
      adopted: session.inflight.size,
    });
    ctx.workerEvents.emit('connected', session.workerId, session.endpointId);
    dispatcher.pump(session.endpointId);
    return session;
  }

  /** Takes a session out of service once: its jobs get a lease (or are requeued). */
  private async retire(s: WorkerSession, why: string): Promise<void> {
    if (s.closed) return;
    s.closed = true;
    this.deps.ctx.registry.remove(s);
    this.deps.ctx.logger.info('worker disconnected', {
      workerId: s.workerId,
      endpointId: s.endpointId,
      why,
      running: s.inflight.size,
    });
    await this.deps.reports.onSessionClosed(s);
  }

  private heartbeat(): void {
    const now = performance.now();
    const hb = this.deps.ctx.options.heartbeatMs;
    for (const s of this.deps.ctx.registry.sessions()) {
      if (now - s.lastSeen > 3 * hb) {
        this.deps.ctx.logger.warn('worker missed heartbeats: dropping it', {
          workerId: s.workerId,
          silentMs: Math.round(now - s.lastSeen),
        });
        s.terminate();
      } else s.send({ type: 'ping', t: Date.now() });
    }
  }

  /** Tells every worker to drain by `deadline` (epoch ms). */
  drainAll(deadline: number): void {
    for (const s of this.deps.ctx.registry.sessions()) s.send({ type: 'drain', deadline });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const ws of this.sockets) ws.close(1001, 'server shutting down');
    await new Promise<void>((r) => setTimeout(r, 50));
    for (const ws of this.sockets) ws.terminate();
    await new Promise<void>((r) => this.wss.close(() => r()));
  }
}
