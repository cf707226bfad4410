import { LABEL_CONTROL_PLANE, LABEL_DEPLOYMENT, LABEL_ENDPOINT } from './container-spec.js';
import type { ContainerSummary } from './docker-api.js';
import type { PoolContext } from './pool-context.js';
import { errorText, type EndpointState } from './scaler-state.js';

// Whose containers and tokens the Docker pool takes: this deployment's containers (others are left alone), the
// worker tokens its running containers carry, and the removal of containers of endpoints no longer configured.

/**
 * Only this deployment's containers (and those of starts before deployments had ids): others are left alone, and
 * said once (`warned`).
 */
export function oursOnly(ctx: PoolContext, list: ContainerSummary[], warned: { said: boolean }): ContainerSummary[] {
  const ours = list.filter((c) => (c.Labels[LABEL_DEPLOYMENT] ?? ctx.owner.deployment) === ctx.owner.deployment);
  if (ours.length < list.length && !warned.said) {
    warned.said = true;
    ctx.o.logger.warn(
      `${list.length - ours.length} container(s) labelled ${LABEL_CONTROL_PLANE}=${ctx.o.name} belong to another deployment (another data folder or database): left alone; give each deployment its own --scale-name`,
    );
  }
  return ours;
}

/** The lease holder's first look: each endpoint's token, reused from its containers when still valid. */
export async function settleTokens(
  ctx: PoolContext,
  states: Iterable<EndpointState>,
  list: ContainerSummary[],
): Promise<boolean> {
  try {
    for (const st of states) {
      const inUse = list
        .filter((c) => c.Labels[LABEL_ENDPOINT] === st.s.ep.id && c.State === 'running')
        .map((c) => ctx.details.get(c.Id)?.env['BERTH_WORKER_TOKEN'])
        .filter((x): x is string => x !== undefined);
      const { token, revoked } = await ctx.o.tokens.settle(st.s.ep.id, inUse);
      st.token = token;
      if (revoked > 0)
        ctx.o.logger.info(`endpoint ${st.s.ep.id}: revoked ${revoked} worker token(s) no container uses`);
    }
    return true;
  } catch (err) {
    ctx.o.logger.error('could not settle the worker tokens', { error: errorText(err) });
    return false;
  }
}

/** A container of this control plane whose endpoint is no longer configured: drained and removed. */
export function removeStray(ctx: PoolContext, c: ContainerSummary): void {
  if (ctx.removing.has(c.Id)) return;
  ctx.removing.add(c.Id);
  const name = (c.Names[0] ?? c.Id).replace(/^\//, '');
  ctx.o.logger.info(`removing ${name}: endpoint ${c.Labels[LABEL_ENDPOINT] ?? '?'} is no longer configured`);
  const { docker } = ctx.o;
  void (c.State === 'running' ? docker.stopContainer(c.Id, 30) : Promise.resolve())
    .then(() => docker.removeContainer(c.Id))
    .catch((err: unknown) => ctx.o.logger.warn(`could not remove ${name}`, { error: errorText(err) }))
    .finally(() => ctx.removing.delete(c.Id));
}
