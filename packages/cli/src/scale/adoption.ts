import type { ContainerDetails } from './docker-api.js';

/**
 * How a container found at start differs from what this start would create (undefined: it does not): another
 * `BERTH_URL` (a redeploy on another address), another image, or another worker token (revoked, or of another
 * start). Such a container is not counted as a worker until it connects.
 */
export function configDifference(
  d: ContainerDetails | undefined,
  want: { url: string; image: string; token: string | undefined },
): string | undefined {
  if (!d) return 'not inspected';
  const url = d.env['BERTH_URL'];
  if (url !== want.url) return `its BERTH_URL is ${url ?? 'unset'}, this start's is ${want.url}`;
  if (d.image !== want.image) return `its image is ${d.image}, this start's is ${want.image}`;
  if (want.token === undefined || d.env['BERTH_WORKER_TOKEN'] !== want.token)
    return 'its worker token is not the one this start gives its workers';
  return undefined;
}
