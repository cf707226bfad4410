import type { CoreContext } from './context.js';
import type { Dispatcher } from './dispatcher.js';
import type { ClusterBus } from '../cluster/types.js';

const PRESENCE_CHECK_MS = 200;
const PRESENCE_REPEAT_MS = 2_000;

/** Options of `wireCluster`. */
export interface WireClusterOptions {
  /**
   * How often idle local workers look for queued jobs without being told (a NOTIFY lost in an outage, or a
   * job requeued by another replica's sweep). Default 1000 ms; 0 turns it off.
   */
  pumpIntervalMs?: number;
  /**
   * How often every local waiter (/runsync, /status-sync, /stream) re-reads the store without being woken: the
   * bound on a wait that missed its notification (sent while the database was unreachable). Default 5000 ms.
   */
  wakeIntervalMs?: number;
}

/** A running cluster link; `close()` stops it. */
export interface ClusterLink {
  bus: ClusterBus;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects this replica's job machinery to the others through `bus`: local job events go out and remote ones wake
 * local waiters; jobs queued anywhere are pumped to local idle workers; stops for attempts whose worker is not
 * connected here go to the replica that has it. After an outage of the channel every waiter re-reads and every
 * endpoint with local workers is pumped.
 */
export function wireCluster(
  ctx: CoreContext,
  dispatcher: Dispatcher,
  bus: ClusterBus,
  opts: WireClusterOptions = {},
): ClusterLink {
  const { events, registry, logger } = ctx;
  bus.onResync(() => (lastPresence = '')); // tell the others again after an outage
  bus.interestedIn = (id) => events.has(id);
  events.forward = (id, kind, data, job) =>
    bus.publish({ t: 'job', id, kind, ...(data ? { data } : {}), ...(job ? { job } : {}) });
  dispatcher.remoteStop = (job, reason) => {
    if (job.workerId !== undefined)
      bus.publish({ t: 'stop', id: job.id, attempt: job.attempt, workerId: job.workerId, reason });
  };
  const pumpLocal = () => {
    for (const id of new Set(registry.sessions().map((s) => s.endpointId))) dispatcher.pump(id);
  };
  bus.onMessage((m) => {
    if (m.t === 'job') events.emitLocal(m.id, m.kind, m.data, m.job);
    else if (m.t === 'presence') registry.remote.set(m.replica, m.eps);
    else if (m.t === 'queued') {
      if (registry.sessions(m.endpointId).length) dispatcher.pump(m.endpointId);
    } else {
      const s = registry.get(m.workerId);
      if (s && s.inflight.get(m.id) === m.attempt)
        s.send({ type: 'job.cancel', id: m.id, attempt: m.attempt, reason: m.reason });
    }
  });
  bus.onResync(() => {
    logger.info('cluster channel back: waking waiters and pumping queues');
    events.wakeAll();
    pumpLocal();
  });
  const every = opts.pumpIntervalMs ?? 1_000;
  const wakeEvery = opts.wakeIntervalMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  let wakeTimer: NodeJS.Timeout | undefined;
  let presenceTimer: NodeJS.Timeout | undefined;
  // This replica's workers go to the others when they change (checked every PRESENCE_CHECK_MS) and every
  // PRESENCE_REPEAT_MS anyway (a replica that starts later hears them; a silent one drops out of their view).
  let lastPresence = '';
  let lastPresenceAt = 0;
  const sharePresence = () => {
    const eps = registry.localPresence(performance.now(), ctx.options.heartbeatMs);
    const text = JSON.stringify(eps);
    if (text === lastPresence && Date.now() - lastPresenceAt < PRESENCE_REPEAT_MS) return;
    lastPresence = text;
    lastPresenceAt = Date.now();
    bus.publish({ t: 'presence', replica: bus.replicaId, eps });
  };
  return {
    bus,
    async start() {
      await bus.start();
      if (every > 0 && !timer) {
        timer = setInterval(pumpLocal, every);
        timer.unref();
      }
      if (!presenceTimer) {
        presenceTimer = setInterval(sharePresence, PRESENCE_CHECK_MS);
        presenceTimer.unref();
      }
      if (wakeEvery > 0 && !wakeTimer) {
        wakeTimer = setInterval(() => events.wakeAll(), wakeEvery);
        wakeTimer.unref();
      }
    },
    async close() {
      if (timer) clearInterval(timer);
      if (wakeTimer) clearInterval(wakeTimer);
      if (presenceTimer) clearInterval(presenceTimer);
      timer = wakeTimer = presenceTimer = undefined;
      bus.publish({ t: 'presence', replica: bus.replicaId }); // leaving: the others stop counting its workers
      await new Promise((r) => setImmediate(r)); // lets the bus send it
      events.forward = undefined;
      bus.interestedIn = undefined;
      dispatcher.remoteStop = undefined;
      await bus.close();
    },
  };
}
