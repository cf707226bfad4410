import { nextWorkerId } from '@berth/server/scaling';
import { DEFAULT_RESTART_POLICY } from '../internal/supervisor-types.js';
import { containerSpec, LABEL_CONTROL_PLANE, LABEL_DEPLOYMENT, LABEL_ENDPOINT } from './container-spec.js';
import { DockerError } from './docker-api.js';
import type { PoolContext } from './pool-context.js';
import { errorText, IMAGE_RETRY_MS, type EndpointState, type Tracked } from './scaler-state.js';

// A worker container's life in the Docker pool: created and started, then removed once it has exited (a crash
// unless the scaler stopped it).

/** Creates and starts one worker container of the endpoint; tracked at once, the calls go on in the background. */
/**
 * A new container's name: `<scale name>-<deployment>-<endpoint>[-batch]-<n>`, the lowest free n; a load-balancing
 * endpoint's n only grows (`lastNumber`), so a name a client may still pin is not given to a newer container.
 */
function workerName(ctx: PoolContext, st: EndpointState, lane: 'batch' | undefined): string {
  const prefix = `${ctx.o.name}-${ctx.owner.deployment}-${st.s.ep.id}${lane ? '-batch' : ''}`;
  const taken = [...st.workers.keys(), ...st.foreign];
  if (!ctx.o.http?.has(st.s.ep.id)) return nextWorkerId(prefix, taken);
  for (const name of taken) {
    const n = Number(name.slice(prefix.length + 1));
    if (name.startsWith(`${prefix}-`) && Number.isSafeInteger(n)) st.lastNumber = Math.max(st.lastNumber, n);
  }
  return `${prefix}-${++st.lastNumber}`;
}

export function createWorker(ctx: PoolContext, st: EndpointState, now: number, lane?: 'batch', asName?: string): void {
  const ep = st.s.ep;
  const name = asName ?? workerName(ctx, st, lane);
  const t: Tracked = {
    name,
    id: '',
    createdAt: now,
    adopted: false,
    verified: true,
    connected: false,
    draining: false,
    starting: true,
    timed: false,
  };
  // Its own GPUs (`gpusPerWorker`): the scale loop asks for a worker only when they are free.
  const per = ep.gpusPerWorker ?? 0;
  const gpus = per > 0 ? ctx.o.gpus?.take(ep.id, name, per) : [];
  if (!gpus) {
    ctx.o.logger.warn(`endpoint ${ep.id}: no ${per} GPU(s) free for a new worker: not started`);
    return;
  }
  st.workers.set(name, t);
  // A batch lane worker is known as one before it connects (issue #38).
  if (lane) ctx.o.workers.setLane(name, lane);
  const { docker } = ctx.o;
  void (async () => {
    try {
      t.createdAt = ctx.now();
      // A load-balancing endpoint's worker: a free port, registered with the proxy (health checks begin).
      const http = ctx.o.http?.has(ep.id) ? ctx.o.http : undefined;
      const ports = http && (await http.prepare(ep.id, name));
      const spec = containerSpec(st.s, name, ctx.owner, ctx.o.url, st.token!, gpus, lane, ports);
      t.id = await docker.createContainer(name, spec);
      t.createdDoneAt = ctx.now();
      await docker.startContainer(t.id);
      t.startedAt = ctx.now();
      t.starting = false;
      // The image is there after all: queued jobs now wait for this worker's start.
      if (st.reason === 'image_missing') st.reason = undefined;
    } catch (err) {
      // Still tracked (and starting) while it is removed: neither a tick nor the wake starts another meanwhile,
      // and its exit is not counted as a second crash.
      if (t.id) await docker.removeContainer(t.id).catch(() => {});
      t.starting = false;
      st.workers.delete(name);
      ctx.o.gpus?.release(name);
      ctx.o.http?.removed(name, false);
      if (err instanceof DockerError && err.status === 404 && /image/i.test(err.message)) {
        st.notBefore = ctx.now() + IMAGE_RETRY_MS;
        ctx.o.workers.startFailed(ep.id, 'image_missing');
        return ctx.problems.set(
          st,
          `endpoint ${ep.id}: image ${st.s.image} not found in the docker daemon (build it: berth build, then docker build -t ${st.s.image} <folder>); looking again in ${IMAGE_RETRY_MS / 1000} s`,
          'image_missing',
        );
      }
      if (err instanceof DockerError && err.status === 409) return void nameTaken(ctx, st, name);
      ctx.o.workers.startFailed(ep.id, 'create_failed');
      ctx.problems.backoff(st, `endpoint ${ep.id}: could not start a worker container: ${errorText(err)}`);
    }
  })();
}

/** A container stopped: removed; unless the scaler stopped it, a crash (backoff before the next start). */
export async function reapExited(ctx: PoolContext, st: EndpointState, t: Tracked, now: number): Promise<void> {
  if (ctx.removing.has(t.id)) return;
  ctx.removing.add(t.id);
  try {
    const { exitCode, tail } = await ctx.o.docker.exitOf(t.id).catch(() => ({ exitCode: -1, tail: '' }));
    await ctx.o.docker.removeContainer(t.id);
    st.workers.delete(t.name);
    ctx.o.gpus?.release(t.name);
    ctx.o.http?.removed(t.name, t.draining);
    ctx.details.delete(t.id);
    if (!t.verified) {
      // A container of an earlier start that never connected here: not a crash of this start's workers.
      ctx.o.logger.info(`removed adopted worker container ${t.name} (exit ${exitCode}; ${t.differs})`, {
        endpointId: st.s.ep.id,
      });
      return;
    }
    if (t.draining) {
      ctx.o.logger.info(`worker container ${t.name} stopped (exit ${exitCode})`, { endpointId: st.s.ep.id });
      return;
    }
    const upS = ((now - t.createdAt) / 1000).toFixed(1);
    const why = `endpoint ${st.s.ep.id}: worker container ${t.name} exited with code ${exitCode} ${t.connected ? 'after' : 'before connecting, after'} ${upS} s`;
    const output = tail ? `; its last output:\n${tail.replace(/^/gm, '    ')}` : '';
    if (t.connected && now - t.createdAt >= DEFAULT_RESTART_POLICY.minUptimeMs) {
      ctx.o.logger.warn(`${why}; starting another${output}`);
    } else {
      ctx.o.workers.startFailed(st.s.ep.id, 'exited_early');
      ctx.problems.backoff(st, `${why}${output}`, true);
    }
  } finally {
    ctx.removing.delete(t.id);
  }
}

/** A create met a container of that name: removed only when it carries this deployment's labels. */
async function nameTaken(ctx: PoolContext, st: EndpointState, name: string): Promise<void> {
  const d = await ctx.o.docker.inspectContainer(name).catch(() => undefined);
  if (
    d &&
    d.labels[LABEL_CONTROL_PLANE] === ctx.o.name &&
    d.labels[LABEL_DEPLOYMENT] === ctx.owner.deployment &&
    d.labels[LABEL_ENDPOINT] === st.s.ep.id
  ) {
    // Ours, created since the last listing: the next look adopts it.
    return;
  }
  st.foreign.add(name);
  ctx.o.logger.warn(
    `a container named ${name} exists without this deployment's labels: left alone; the next worker of ${st.s.ep.id} takes another name`,
  );
}
