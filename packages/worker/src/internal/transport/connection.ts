import WebSocket from 'ws';
import {
  PROTOCOL_VERSION,
  decodeServerMessage,
  type HelloMessage,
  type ServerMessage,
  type WelcomeMessage,
  type WorkerMessage,
  type WsErrorCode,
} from '@berth/protocol';
import { sendCoalesced } from '@berth/protocol/internal';
import type { Logger } from '../../logger.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import { frameText } from './frame-limit.js';

/** Server messages the connection hands on (everything but welcome, ping, pong and error). */
export type JobControlMessage = Exclude<ServerMessage, { type: 'welcome' | 'ping' | 'pong' | 'error' }>;

/** Errors after which reconnecting cannot help: the worker stops with exit code 1. */
const FATAL: Partial<Record<WsErrorCode, string>> = {
  protocol_mismatch: `the control plane does not speak worker protocol ${PROTOCOL_VERSION}; use matching versions of @berth/worker and the control plane`,
  unauthorized: 'the control plane refused the worker token; check BERTH_WORKER_TOKEN',
  unknown_endpoint: 'the control plane does not know this endpoint; check BERTH_ENDPOINT_ID',
};

export interface ConnectionOptions {
  /** Full `ws(s)://.../v2/_worker/ws` URL. */
  url: string;
  token: string;
  log: Logger;
  backoff: BackoffOptions;
  /** Time allowed from dialing to receiving `welcome`. */
  handshakeTimeoutMs: number;
  /** Builds the `hello` sent first on every (re)connect. */
  hello: () => HelloMessage;
  onWelcome: (welcome: WelcomeMessage) => void;
  onMessage: (message: JobControlMessage) => void;
  /** A fatal error: the connection is closed for good. */
  onFatal: (code: string, message: string) => void;
}

type State = 'idle' | 'connecting' | 'ready' | 'waiting' | 'closed';

/**
 * One logical connection to the control plane over successive WebSockets: dials, says `hello`, waits for
 * `welcome`, keeps heartbeats both ways, and reconnects with backoff whenever the socket drops or goes silent
 * for three heartbeat intervals.
 */
export class Connection {
  private ws: WebSocket | undefined;
  private state: State = 'idle';
  private attempt = 0;
  private lastError: string | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** When the current socket last heard from the control plane (a timestamp per frame, not a timer re-armed per frame). */
  private lastHeard = 0;

  constructor(private readonly opts: ConnectionOptions) {}

  /** True once `welcome` arrived on the current, open socket. */
  get ready(): boolean {
    return this.state === 'ready' && this.ws?.readyState === WebSocket.OPEN;
  }

  start(): void {
    if (this.state === 'idle') this.dial();
  }

  /** Sends a message if the connection is ready; returns false (and sends nothing) otherwise. */
  send(message: WorkerMessage): boolean {
    if (!this.ready || !this.ws) return false;
    sendCoalesced(this.ws, frameText(message)); // the messages of one turn leave in one write
    return true;
  }

  /** Closes the current socket and dials again after the shortest backoff (used when the server drains). */
  recycle(reason: string): void {
    if (this.state === 'closed' || !this.ws) return;
    this.opts.log.info('closing the connection to reconnect', { reason });
    this.attempt = 0;
    this.ws.close(1000, reason.slice(0, 100));
  }

  /** Closes for good. Graceful (pending messages go out first) unless `hard`; never waits more than 2 s. */
  async close(options: { hard?: boolean; reason?: string } = {}): Promise<void> {
    this.state = 'closed';
    this.clearTimers();
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => ws.terminate(), 2000);
      ws.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      if (options.hard || ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else if (ws.readyState === WebSocket.OPEN) ws.close(1000, options.reason ?? 'worker shutting down');
    });
  }

  private dial(): void {
    this.state = 'connecting';
    const { log, url } = this.opts;
    log.debug('connecting to the control plane', { url, attempt: this.attempt });
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${this.opts.token}` },
      handshakeTimeout: this.opts.handshakeTimeoutMs,
      perMessageDeflate: false,
      skipUTF8Validation: true, // the control plane sends JSON.stringify text (valid UTF-8); bad bytes would read as U+FFFD
      // A zero masking key: ws then skips masking here and unmasking in the control plane (both were a JS loop over
      // every byte: about 40 ms each way for a 19 MB result). Masking guards browsers' intermediaries, not a worker.
      generateMask: zeroMask,
    });
    this.ws = ws;
    this.after(this.opts.handshakeTimeoutMs, () => {
      if (this.ws !== ws || this.state !== 'connecting') return;
      this.lastError = `no welcome within ${this.opts.handshakeTimeoutMs} ms`;
      ws.terminate();
    });
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      if (status === 401 || status === 403) {
        this.fatal('unauthorized', `HTTP ${status} on the worker WebSocket upgrade`);
        return;
      }
      this.lastError = `HTTP ${status} instead of a WebSocket upgrade (is BERTH_URL the control plane?)`;
      ws.terminate();
    });
    ws.on('open', () => ws.send(JSON.stringify(this.opts.hello())));
    ws.on('message', (data: WebSocket.RawData) => {
      if (this.ws !== ws) return;
      this.lastHeard = Date.now();
      this.onFrame(ws, rawToText(data));
    });
    ws.on('ping', () => (this.lastHeard = Date.now()));
    ws.on('pong', () => (this.lastHeard = Date.now()));
    ws.on('error', (err) => {
      this.lastError = err.message;
    });
    ws.on('close', (code, reason) => this.onClose(ws, code, reason.toString()));
  }

  private onFrame(ws: WebSocket, text: string): void {
    const decoded = decodeServerMessage(text);
    if (!decoded.ok) {
      this.opts.log.warn('ignored an invalid message from the control plane', {
        error: decoded.error,
        message: text.slice(0, 200),
      });
      return;
    }
    const msg = decoded.value;
    switch (msg.type) {
      case 'welcome':
        return this.onWelcome(ws, msg);
      case 'ping':
        ws.send(JSON.stringify({ type: 'pong', t: msg.t } satisfies WorkerMessage));
        return;
      case 'pong':
        return;
      case 'error': {
        if (FATAL[msg.code] !== undefined) return this.fatal(msg.code, msg.message);
        this.opts.log.warn('error from the control plane', { code: msg.code, message: msg.message });
        return;
      }
      default:
        try {
          this.opts.onMessage(msg);
        } catch (err) {
          this.opts.log.error('failed to handle a message from the control plane', { type: msg.type, error: err });
        }
    }
  }

  private onWelcome(ws: WebSocket, welcome: WelcomeMessage): void {
    if (welcome.protocol !== PROTOCOL_VERSION) {
      this.fatal(
        'protocol_mismatch',
        `welcome announced protocol ${welcome.protocol}, this worker speaks ${PROTOCOL_VERSION}`,
      );
      return;
    }
    const hb = welcome.heartbeatMs;
    this.clearTimers();
    this.state = 'ready';
    this.lastError = undefined;
    // Only a connection that stays up resets the backoff, so a server that accepts and drops us is not hammered.
    this.after(hb, () => {
      if (this.ws === ws) this.attempt = 0;
    });
    const ping = setInterval(() => this.send({ type: 'ping', t: Date.now() }), hb);
    this.timers.add(ping);
    this.lastHeard = Date.now();
    const watch = (ms: number): void => {
      this.after(ms, () => {
        if (this.ws !== ws) return;
        const quiet = Date.now() - this.lastHeard;
        if (quiet < 3 * hb) return watch(3 * hb - quiet);
        this.opts.log.warn('no message from the control plane for 3 heartbeats; reconnecting', { heartbeatMs: hb });
        ws.terminate();
      });
    };
    watch(3 * hb);
    this.opts.log.info('connected to the control plane', {
      url: this.opts.url,
      heartbeatMs: hb,
      stale: welcome.stale.length,
    });
    this.opts.onWelcome(welcome);
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (this.ws !== ws) return;
    this.ws = undefined;
    this.clearTimers();
    if (this.state === 'closed') return;
    if (FATAL[reason as WsErrorCode] !== undefined) {
      this.fatal(reason, `the control plane closed the connection (${code} ${reason})`);
      return;
    }
    const wasReady = this.state === 'ready';
    const delay = backoffDelay(this.attempt++, this.opts.backoff);
    const why = reason || this.lastError || `closed with code ${code}`;
    if (wasReady)
      this.opts.log.warn('disconnected from the control plane; reconnecting', { reason: why, code, retryInMs: delay });
    else
      this.opts.log.warn('could not connect to the control plane', {
        url: this.opts.url,
        error: why,
        retryInMs: delay,
      });
    this.lastError = undefined;
    this.state = 'waiting';
    this.after(delay, () => {
      if (this.state === 'waiting') this.dial();
    });
  }

  private fatal(code: string, detail: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.clearTimers();
    this.ws?.terminate();
    const hint = FATAL[code as WsErrorCode] ?? 'the control plane refused this worker';
    this.opts.onFatal(code, `${hint} (${code}: ${detail})`);
  }

  private after(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
    return t;
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

function rawToText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

/** The masking key of every frame the worker sends: zero (see `dial`). */
function zeroMask(mask: Uint8Array): void {
  mask.fill(0);
}
