import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  PROTOCOL_VERSION,
  WORKER_WS_PATH,
  decodeWorkerMessage,
  type HelloMessage,
  type ServerMessage,
  type WelcomeMessage,
  type WorkerMessage,
} from '@berth/protocol';

type Of<T extends WorkerMessage['type']> = Extract<WorkerMessage, { type: T }>;

export interface FakeControlPlaneOptions {
  /** Accepted worker token. Default `test-token`. */
  token?: string;
  /** `welcome.heartbeatMs`. Default 1000. */
  heartbeatMs?: number;
  /** Answer worker pings with pongs. Default true. */
  answerPings?: boolean;
  /** Reply to `hello`; return undefined to send no welcome. Default: a welcome with no stale jobs. */
  welcome?: (hello: HelloMessage, socket: FakeWorkerSocket) => Partial<WelcomeMessage> | undefined;
}

/**
 * The server side of one worker connection. Every frame is decoded with the protocol's schema: frames that do not
 * decode land in `invalid` (tests assert it stays empty).
 */
export class FakeWorkerSocket {
  readonly messages: WorkerMessage[] = [];
  readonly invalid: string[] = [];
  hello: HelloMessage | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly consumed = new Set<number>();
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly ws: WebSocket,
    readonly headers: IncomingHttpHeaders,
  ) {
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      const decoded = decodeWorkerMessage(text);
      if (!decoded.ok) this.invalid.push(`${decoded.error}: ${text}`);
      else this.messages.push(decoded.value);
      for (const listener of [...this.listeners]) listener();
    });
  }

  /** Sends a server message (or raw text, to test malformed input). */
  send(message: ServerMessage | string): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Messages of one type received so far. */
  all<T extends WorkerMessage['type']>(type: T): Of<T>[] {
    return this.messages.filter((m): m is Of<T> => m.type === type);
  }

  /** Resolves with the first not-yet-taken message of `type` matching `match` (waiting for it if needed). */
  next<T extends WorkerMessage['type']>(
    type: T,
    match: (m: Of<T>) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<Of<T>> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const i = this.messages.findIndex((m, idx) => !this.consumed.has(idx) && m.type === type && match(m as Of<T>));
        if (i < 0) return false;
        this.consumed.add(i);
        this.listeners.delete(listener);
        clearTimeout(timer);
        resolve(this.messages[i] as Of<T>);
        return true;
      };
      const listener = (): void => void check();
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`no ${type} within ${timeoutMs} ms; got: ${this.messages.map((m) => m.type).join(', ')}`));
      }, timeoutMs);
      this.listeners.add(listener);
      check();
    });
  }
}

export interface FakeControlPlane extends AsyncDisposable {
  /** `ws://127.0.0.1:<port>/v2/_worker/ws` */
  readonly url: string;
  /** `http://127.0.0.1:<port>`, what `BERTH_URL` holds. */
  readonly baseUrl: string;
  readonly token: string;
  readonly sockets: FakeWorkerSocket[];
  /** When set, upgrades are answered with this HTTP status instead (e.g. 503 to keep a worker disconnected). */
  refuseWith: number | undefined;
  /** Resolves with connection number `index` (0-based) once its `hello` arrived. */
  connection(index: number, timeoutMs?: number): Promise<FakeWorkerSocket>;
  close(): Promise<void>;
}

/**
 * A minimal control plane on 127.0.0.1, port 0: checks the bearer token (401 otherwise), records every worker
 * message, welcomes each `hello`, answers pings. Dispose it with `await using`.
 *
 * @example
 * await using cp = await startFakeControlPlane();
 * const socket = await cp.connection(0);
 * socket.send({ type: 'job.assign', id: 'j1', attempt: 1, input: {} });
 * await socket.next('job.complete');
 */
export async function startFakeControlPlane(options: FakeControlPlaneOptions = {}): Promise<FakeControlPlane> {
  const token = options.token ?? 'test-token';
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const http = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const sockets: FakeWorkerSocket[] = [];
  const helloWaiters = new Set<() => void>();

  http.on('upgrade', (req, socket, head) => {
    const status =
      cp.refuseWith ?? (req.url !== WORKER_WS_PATH ? 404 : req.headers.authorization !== `Bearer ${token}` ? 401 : 0);
    if (status !== 0) {
      socket.end(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new FakeWorkerSocket(ws, req.headers);
      ws.on('message', () => {
        const last = conn.messages.at(-1);
        if (last?.type === 'hello' && conn.hello === undefined) {
          conn.hello = last;
          sockets.push(conn);
          const extra = options.welcome ? options.welcome(last, conn) : {};
          if (extra !== undefined) {
            conn.send({
              type: 'welcome',
              protocol: PROTOCOL_VERSION,
              workerId: last.workerId,
              heartbeatMs,
              stale: [],
              acks: false,
              blobs: false,
              ...extra,
            });
          }
          for (const w of [...helloWaiters]) w();
        } else if (last?.type === 'ping' && options.answerPings !== false) {
          conn.send({ type: 'pong', t: last.t });
        }
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  const close = async (): Promise<void> => {
    for (const client of wss.clients) client.terminate();
    wss.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };

  const cp: FakeControlPlane = {
    url: `ws://127.0.0.1:${port}${WORKER_WS_PATH}`,
    baseUrl: `http://127.0.0.1:${port}`,
    token,
    sockets,
    refuseWith: undefined,
    connection(index, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const socket = sockets[index];
          if (!socket) return;
          helloWaiters.delete(check);
          clearTimeout(timer);
          resolve(socket);
        };
        const timer = setTimeout(() => {
          helloWaiters.delete(check);
          reject(new Error(`no worker connection #${index} within ${timeoutMs} ms (have ${sockets.length})`));
        }, timeoutMs);
        helloWaiters.add(check);
        check();
      });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
  return cp;
}
