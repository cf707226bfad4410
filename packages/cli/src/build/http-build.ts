import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ResolvedEndpoint } from '../config/index.js';
import { checkExpose } from './dockerfile.js';
import { k8sHttpManifests } from './k8s-http.js';

/** What `berth build` did with a load-balancing endpoint. */
export type HttpBuild =
  | { kind: 'skipped'; message: string }
  | { kind: 'failed'; message: string }
  | { kind: 'built'; message: string; image: string; context: string };

/**
 * A load-balancing endpoint's image is its own: `berth build` bundles nothing, it checks the project's
 * `Dockerfile` (next to the config file) exposes the worker's port and writes `<out>/<ep>/k8s/` (Deployment and
 * Service on that port). No Dockerfile: skipped, saying so.
 */
export function buildHttpEndpoint(ep: ResolvedEndpoint, projectDir: string, outDir: string): HttpBuild {
  const file = join(projectDir, 'Dockerfile');
  if (!existsSync(file))
    return {
      kind: 'skipped',
      message: `skipped: a load-balancing endpoint ("type": "http") brings its own image, and there is no Dockerfile in ${projectDir} to check (its server on PORT, EXPOSE that port; docs/load-balancing.md)`,
    };
  const check = checkExpose(readFileSync(file, 'utf8'));
  if (check.problems.length || check.port === undefined)
    return { kind: 'failed', message: `Dockerfile: ${check.problems.join('; ')}` };
  const image = ep.image ?? ep.id;
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, 'k8s'), { recursive: true });
  for (const [name, text] of Object.entries(k8sHttpManifests(ep, image, check.port)))
    writeFileSync(join(outDir, 'k8s', name), text);
  return {
    kind: 'built',
    image,
    context: projectDir,
    message: `Dockerfile exposes ${check.ports.join(', ')} (worker port ${check.port}); wrote ${relative(projectDir, outDir) || '.'}/k8s/ (deployment.yaml, service.yaml)`,
  };
}
