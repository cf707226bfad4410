import type { HelloMessage, ServerMessage, WorkerMessage } from '@berth/protocol';
import { sendCoalesced } from '@berth/protocol/internal';
import { RawJson, jsonBytes } from '../core/raw-json.js';
import { BlobJson } from '../core/blob-json.js';
import type { WorkerSession } from '../workers/worker-session.js';

/** What a session needs of its connection: a `ws` WebSocket. */
export interface SessionSocket {
  readonly readyState: number;
  readonly OPEN: number;
  send(data: string): void;
  /** A text frame given as UTF-8 bytes (`ws` sends a Buffer as is with `binary: false`). */
  send(data: Buffer, options: { binary: false }): void;
  terminate(): void;
  close(code?: number, reason?: string): void;
}

/** A worker connected over the WebSocket: what its `hello` announced, the jobs it holds, and its socket. */
export class WebSocketSession implements WorkerSession {
  readonly workerId: string;
  readonly endpointId: string;
  readonly stream: boolean;
  readonly inputSchema: Record<string, unknown> | undefined;
  concurrency: number;
  readonly batchMaxSize: number | undefined;
  /** The worker fetches big inputs by reference (`hello.blobs`). */
  readonly blobs: boolean;
  readonly inflight = new Map<string, number>();
  reserved = 0;
  /** Results that may still skip the message rate limit: one per attempt handed to this session (`hold`). */
  private resultPasses = 0;
  draining = false;
  closed = false;
  /** performance.now() of the last message received. */
  lastSeen: number;
  connectedAt = 0;
  warm = false;

  constructor(
    private readonly socket: SessionSocket,
    hello: HelloMessage,
    now: number,
    readonly credentialId = '',
  ) {
    this.workerId = hello.workerId;
    this.endpointId = hello.endpointId;
    this.stream = hello.stream;
    this.inputSchema = hello.inputSchema;
    this.concurrency = hello.concurrency;
    this.batchMaxSize = hello.batch?.maxSize;
    this.blobs = hello.blobs === true;
    this.lastSeen = now;
  }

  get capacity(): number {
    if (this.draining || this.closed) return 0;
    return Math.max(0, this.concurrency - this.inflight.size - this.reserved);
  }

  hold(id: string, attempt: number): void {
    this.inflight.set(id, attempt);
    // Never more than the attempts held: passes of attempts that ended without a result (timed out, requeued) lapse.
    this.resultPasses = Math.min(this.resultPasses + 1, this.inflight.size);
  }

  /**
   * Whether `msg` is the result of an attempt this session holds, taking one of the passes `hold` gave: such a
   * result was asked for (credit-based flow control bounds it by the assigns), so it is not counted against the
   * message rate. Without it one busy worker could never complete more than `workerMessagesPerSecond` jobs a
   * second. Repeats of a result sent before the first is applied can use passes too, never more than one per assign.
   */
  takeResultPass(msg: WorkerMessage): boolean {
    if (msg.type !== 'job.complete' && msg.type !== 'job.fail') return false;
    if (this.resultPasses === 0 || this.inflight.get(msg.id) !== msg.attempt) return false;
    this.resultPasses--;
    return true;
  }

  send(msg: ServerMessage): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    // A big input kept as a blob goes by reference to a worker that fetches it (issue #35); one kept as received
    // (`RawJson`) is spliced into the frame as its bytes: no parse, no stringify.
    if (msg.type === 'job.assign' && msg.input instanceof BlobJson && this.blobs) {
      const inputBlob = { url: `/v2/_worker/jobs/${encodeURIComponent(msg.id)}/input`, size: msg.input.length };
      sendCoalesced(this.socket, JSON.stringify({ ...msg, input: {}, inputBlob }));
    } else if (msg.type === 'job.assign' && msg.input instanceof RawJson)
      this.socket.send(jsonBytes(msg) as Buffer, { binary: false });
    else sendCoalesced(this.socket, JSON.stringify(msg)); // the frames of one turn leave in one write
    return true;
  }

  terminate(): void {
    this.socket.terminate();
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }
}
