import type { AssignMessage, WorkerMessage } from '@berth/protocol';
import type { Logger } from '../../logger.js';
import type { JobSpec } from '../execute/execute.js';
import { LazyAbort } from '../execute/lazy-abort.js';

/** Sends a message now if the connection is ready; false means "not sent, keep it". */
export type Transport = (message: WorkerMessage) => boolean;

type JobMessage = Extract<WorkerMessage, { type: 'job.progress' | 'job.stream' | 'job.complete' | 'job.fail' }>;

/**
 * One dispatched job attempt on this worker and everything it still owes the control plane. Messages go out at
 * once while connected and are buffered while disconnected (only the latest progress is kept, chunks are merged). Stream
 * chunks produced in the same tick are coalesced into one `job.stream` message; any other message of the job
 * first flushes them, so the server sees chunks, progress and the result in the order they happened.
 * After `cancel()`, only the final `job.fail` with `aborted: true` is ever sent.
 */
export class JobEntry {
  readonly key: string;
  readonly spec: JobSpec;
  /** A big input kept as a blob on the control plane: fetched before the handler runs (`spec.input` is `{}`). */
  readonly inputBlob: { url: string; size: number } | undefined;
  /** The job's cancel switch; its `AbortSignal` is made only if the handler reads `job.signal`. */
  readonly aborter = new LazyAbort();
  state: 'queued' | 'running' | 'finished' = 'queued';
  /** Set by a server cancel, a stale report or shutdown: outputs are dropped, the result is `aborted`. */
  cancelled = false;
  private pending: JobMessage[] = [];
  /** The result (`job.complete` / `job.fail`), kept until the server acknowledges it. */
  private final: JobMessage | undefined;
  private acked = false;
  private chunks: unknown[] = [];
  private chunkSeq = 0;
  /** A `job.stream` message of this attempt has been sent (see `chunk`). */
  private streamed = false;
  private flushTimer: NodeJS.Immediate | undefined;
  /** The control plane's run span (`job.assign.traceparent`), with tracing on there. */
  readonly traceparent: string | undefined;

  constructor(
    assign: AssignMessage,
    private readonly transport: Transport,
    readonly log: Logger,
    /** Whether the connected server acknowledges results (`welcome.acks`). */
    private readonly serverAcks: () => boolean = () => false,
  ) {
    this.key = jobKey(assign.id, assign.attempt);
    this.spec = { id: assign.id, input: assign.input, attempt: assign.attempt };
    if (assign.s3Config !== undefined) this.spec.s3Config = assign.s3Config;
    if (assign.deadline !== undefined) this.spec.deadline = assign.deadline;
    this.inputBlob = assign.inputBlob;
    this.traceparent = assign.traceparent;
  }

  get ref(): { id: string; attempt: number } {
    return { id: this.spec.id, attempt: this.spec.attempt };
  }

  /** Finished, nothing left to send and, with a server that acknowledges, the result stored: forget the entry. */
  get delivered(): boolean {
    return this.state === 'finished' && this.pending.length === 0 && (this.acked || !this.serverAcks());
  }

  /** Messages are waiting for a connection. */
  get hasUnsent(): boolean {
    return this.pending.length > 0;
  }

  /** The server stored the result (or no longer wants it). */
  ack(): void {
    this.acked = true;
  }

  /** After a reconnect: a result sent but never acknowledged may have been lost with the old socket; send it again. */
  resendResult(): void {
    if (this.final && !this.acked && !this.pending.includes(this.final)) this.pending.push(this.final);
  }

  chunk(value: unknown, index: number): void {
    if (this.cancelled || this.state === 'finished') return;
    if (this.chunks.length === 0) {
      this.chunkSeq = index;
      // The first chunks of a job leave after this event-loop turn (time to first chunk); later ones after the
      // next turn too: a producer that makes a chunk per turn (a model's forward pass in a setImmediate, one
      // token each) then sends two or three per message instead of one, so every hop of the path (this
      // process's frame and write, the server's read, decode, append and SSE write, the client's read) runs
      // for fewer messages. On an idle loop the second check phase follows at once (a pending immediate keeps
      // the poll phase from waiting), so a lone chunk is not held back.
      this.flushTimer = setImmediate(
        this.streamed ? () => (this.flushTimer = setImmediate(() => this.flushChunks())) : () => this.flushChunks(),
      );
    }
    this.chunks.push(value);
  }

  progress(value: unknown): void {
    if (this.cancelled || this.state === 'finished') return;
    this.flushChunks();
    this.emit({ type: 'job.progress', id: this.spec.id, attempt: this.spec.attempt, progress: value });
  }

  /** Records the result; `outputBlob`: the output was uploaded as that blob (the message names it instead). */
  complete(output: unknown, outputBlob?: string): void {
    if (this.state === 'finished') return;
    if (this.cancelled) return this.fail('cancelled', { aborted: true });
    this.flushChunks();
    this.state = 'finished';
    const { id, attempt } = this.spec;
    this.emit(
      outputBlob === undefined
        ? { type: 'job.complete', id, attempt, output }
        : { type: 'job.complete', id, attempt, output: null, outputBlob },
    );
  }

  /** Records a failure; `aborted` (cancelled, or handed back at shutdown) drops the outputs not yet sent. */
  fail(error: string, options: { aborted: boolean }): void {
    const { aborted } = options;
    if (this.state === 'finished') return;
    if (aborted || this.cancelled) this.dropOutputs();
    else this.flushChunks();
    this.state = 'finished';
    const msg: JobMessage = { type: 'job.fail', id: this.spec.id, attempt: this.spec.attempt, error };
    if (aborted || this.cancelled) msg.aborted = true;
    this.emit(msg);
  }

  /**
   * Aborts the handler and drops everything not yet sent. The result is `job.fail` with `aborted`: at once for a
   * job that has not started or whose result is still buffered, else when the handler returns.
   */
  cancel(reason: string): void {
    this.cancelled = true;
    if (!this.aborter.aborted) this.aborter.abort(new Error(reason));
    if (this.state === 'running') return this.dropOutputs();
    if (this.state === 'queued') return this.fail(reason, { aborted: true });
    if (this.pending.length === 0) return; // result already sent
    this.pending = [];
    this.final = undefined;
    this.emit({ type: 'job.fail', id: this.spec.id, attempt: this.spec.attempt, error: reason, aborted: true });
  }

  /**
   * Shutdown past the drain deadline: aborts the handler and hands the job back at once (`job.fail` with
   * `aborted`, which the control plane requeues), without waiting for the handler to return.
   */
  abandon(reason: string): void {
    this.cancel(reason);
    this.fail(reason, { aborted: true });
  }

  /** Sends buffered messages in order while the connection takes them. */
  flush(): void {
    while (this.pending.length > 0) {
      const next = this.pending[0] as JobMessage;
      if (!this.transport(next)) return;
      this.pending.shift();
    }
  }

  private flushChunks(): void {
    if (this.flushTimer !== undefined) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    if (this.chunks.length === 0) return;
    const chunks = this.chunks;
    this.chunks = [];
    this.streamed = true;
    this.emit({ type: 'job.stream', id: this.spec.id, attempt: this.spec.attempt, seq: this.chunkSeq, chunks });
  }

  private dropOutputs(): void {
    if (this.flushTimer !== undefined) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    this.chunks = [];
    this.pending = this.pending.filter((m) => m.type === 'job.fail');
  }

  private emit(msg: JobMessage): void {
    if (msg.type === 'job.complete' || msg.type === 'job.fail') this.final = msg;
    if (this.pending.length === 0 && this.transport(msg)) return;
    // Buffered (disconnected): progress is a "latest value", so only the newest is kept, and chunks join the
    // previous buffered chunk message so a reconnect sends one job.stream per job.
    if (msg.type === 'job.progress') {
      this.pending = this.pending.filter((m) => m.type !== 'job.progress');
    } else if (msg.type === 'job.stream') {
      const last = this.pending.findLast((m) => m.type === 'job.stream');
      if (last?.type === 'job.stream' && last.seq + last.chunks.length === msg.seq) {
        last.chunks.push(...msg.chunks);
        return;
      }
    }
    this.pending.push(msg);
  }
}

/** Map key of a job attempt. */
export function jobKey(id: string, attempt: number): string {
  return `${id}#${attempt}`;
}
