import { LABEL_GPUS } from './container-spec.js';
import type { ContainerDetails, ContainerSummary } from './docker-api.js';
import type { PoolContext } from './pool-context.js';
import { errorText, type EndpointState, type Tracked } from './scaler-state.js';

/**
 * How a container found at start differs from what this start would create (undefined: it does not): another
 * `BERTH_URL` (a redeploy on another address), another image, or another worker token (revoked, or of another
 * start). Such a container is not counted as a worker until it connects.
 */
export function configDifference(
  d: ContainerDetails | undefined,
  want: { url: string; image: string; token: string | undefined; http?: boolean },
): string | undefined {
  if (!d) return 'not inspected';
  // A load-balancing endpoint's container has neither a URL nor a token: its image says it all.
  if (want.http) return d.image !== want.image ? `its image is ${d.image}, this start's is ${want.image}` : undefined;
  const url = d.env['BERTH_URL'];
  if (url !== want.url) return `its BERTH_URL is ${url ?? 'unset'}, this start's is ${want.url}`;
  if (d.image !== want.image) return `its image is ${d.image}, this start's is ${want.image}`;
  if (want.token === undefined || d.env['BERTH_WORKER_TOKEN'] !== want.token)
    return 'its worker token is not the one this start gives its workers';
  return undefined;
}

/**
 * A container of the endpoint listed and not tracked (started by an earlier process, or since the last look):
 * tracked, and counted at once only when it was started as this start would (URL, image, token); else once it
 * connects.
 */
export function adopt(ctx: PoolContext, st: EndpointState, c: ContainerSummary, name: string, now: number): Tracked {
  const http = ctx.o.http?.has(st.s.ep.id) === true;
  const want = { url: ctx.o.url, image: st.s.image, token: st.token, http };
  const differs = configDifference(ctx.details.get(c.Id), want);
  const t: Tracked = {
    name,
    id: c.Id,
    createdAt: c.Created * 1000,
    adopted: true,
    verified: differs === undefined,
    ...(differs !== undefined ? { differs, adoptedAt: now } : {}),
    connected: false,
    draining: false,
    starting: false,
    timed: true,
  };
  st.workers.set(name, t);
  // A load-balancing endpoint's container listens on the host at the PORT it was created with.
  if (c.State === 'running' && http && !ctx.o.http!.adopt(st.s.ep.id, name, ctx.details.get(c.Id)?.env['PORT']))
    ctx.o.logger.warn(`adopted worker container ${name} has no valid PORT: it gets no request`, {
      endpointId: st.s.ep.id,
    });
  if (c.State === 'running')
    ctx.o.logger.info(
      `adopted worker container ${name}${differs ? `: not counted until it connects (${differs})` : ''}`,
      { endpointId: st.s.ep.id },
    );
  // The GPUs it was given stay its own while it runs.
  const gpus = c.Labels[LABEL_GPUS]?.split(',').filter((d) => d !== '') ?? [];
  if (gpus.length > 0 && ctx.o.gpus) {
    const refused = ctx.o.gpus.claim(st.s.ep.id, name, gpus);
    if (refused.length > 0)
      ctx.o.logger.warn(
        `adopted worker container ${name} uses GPU(s) ${refused.join(', ')} that are not this start's to give (not in the inventory, or held by another worker)`,
        { endpointId: st.s.ep.id },
      );
  }
  return t;
}

/** An adopted container that differs from this start and did not connect in time: stopped, then removed. */
export function replaceStale(ctx: PoolContext, st: EndpointState, t: Tracked): void {
  t.draining = true;
  const s = Math.round((ctx.o.adoptTimeoutMs ?? 60_000) / 1000);
  ctx.o.logger.warn(
    `stopping adopted worker container ${t.name}: it did not connect within ${s} s and was started with another config (${t.differs}); a new one starts in its place`,
    { endpointId: st.s.ep.id },
  );
  ctx.o.docker.stopContainer(t.id, 10).catch((err: unknown) => {
    ctx.o.logger.warn(`could not stop ${t.name}`, { error: errorText(err) });
  });
}
