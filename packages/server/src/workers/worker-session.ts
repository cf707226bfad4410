import type { ServerMessage } from '@berth/protocol';

/**
 * One connected worker, as the registry, the dispatcher and the worker reports see it, whatever protocol it
 * speaks: a WebSocket (`WebSocketSession`, `../ws/ws-session.ts`) or RunPod's HTTP pull protocol (`PullSession`,
 * `../pull/pull-session.ts`). Its announced capacity, the jobs it holds, and a way to send it server messages.
 */
export interface WorkerSession {
  readonly workerId: string;
  readonly endpointId: string;
  /** Id of the credential (worker token) the worker connected with: only the same credential may take its id over. */
  readonly credentialId: string;
  /** The worker streams (the registry answers whether an endpoint's workers stream from it). */
  readonly stream: boolean;
  /** JSON Schema of the handler's input, when the worker announced one. */
  readonly inputSchema: Record<string, unknown> | undefined;
  /** `hello.batch.maxSize` of a batch handler: the dispatcher assigns it jobs in groups of up to this many. */
  readonly batchMaxSize: number | undefined;
  /** Jobs it runs at once (a `concurrency` message changes it). */
  concurrency: number;
  /** Running jobs: id -> attempt. */
  readonly inflight: Map<string, number>;
  /** Credits taken by a dispatch whose claim is still being written. */
  reserved: number;
  draining: boolean;
  /** Retired: out of the registry, its jobs given a lease. */
  closed: boolean;
  /** performance.now() of the last sign of life. */
  lastSeen: number;
  /** Clock time it joined the registry (set by `WorkerRegistry.add`). */
  connectedAt: number;
  /** Whether it has taken a job since it connected (or came back holding jobs): its first one may be a cold start. */
  warm: boolean;
  /** Jobs the control plane may push to this worker now. */
  readonly capacity: number;
  /** The session runs this attempt now (assigned, or adopted after a reconnect). */
  hold(id: string, attempt: number): void;
  /** Hands the worker a server message (an assign, a cancel, a drain, an ack...); false once it cannot be reached. */
  send(msg: ServerMessage): boolean;
  /** Drops the worker at once (missed heartbeats, replaced by a newer connection). */
  terminate(): void;
  /** Ends the session with a WebSocket close code and reason (a pull worker is simply taken out of service). */
  close(code: number, reason: string): void;
}
