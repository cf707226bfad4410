import { accessSync, constants, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { DIFFUSION_FILES } from '../models/hub.js';
import type { ModelLocations } from '../models/locations.js';

/** A folder or hub id is local when it is a path (hub ids look like `owner/name`). */
const isPath = (location: string): boolean => location.startsWith('/') || location.startsWith('.');

function errCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

/** Why `folder` (and `files` in it) cannot be read by this process, or undefined when it can. */
export function folderProblem(folder: string, files: readonly string[] = []): string | undefined {
  const uid = process.getuid?.() ?? 'this user';
  try {
    if (!statSync(folder).isDirectory()) return `${folder} is not a folder`;
    accessSync(folder, constants.R_OK | constants.X_OK);
  } catch (err) {
    return errCode(err) === 'ENOENT'
      ? `model folder not found: ${folder}`
      : `model folder ${folder} is not readable by uid ${uid} (${errCode(err)})`;
  }
  for (const file of files) {
    try {
      accessSync(join(folder, file), constants.R_OK);
    } catch (err) {
      return errCode(err) === 'ENOENT'
        ? `model file missing: ${join(folder, file)}`
        : `model file ${join(folder, file)} is not readable by uid ${uid} (${errCode(err)})`;
    }
  }
  return undefined;
}

/** Problems with the local model folders `needs` names (hub ids are downloaded on first use and not checked). */
export function modelProblems(where: ModelLocations, needs: { image?: boolean; upscale?: boolean }): string[] {
  const out: (string | undefined)[] = [];
  if (needs.image && isPath(where.image)) out.push(folderProblem(where.image, DIFFUSION_FILES.required));
  if (needs.upscale) for (const loc of Object.values(where.upscale)) if (isPath(loc)) out.push(folderProblem(loc));
  return out.filter((p): p is string => p !== undefined);
}

/** `command` cannot be run (not installed / not on the PATH), or undefined when it runs. */
export function commandProblem(command: string, args: readonly string[] = ['-version']): string | undefined {
  const r = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 });
  if (r.error) return `cannot run ${command}: ${errCode(r.error)}`;
  return undefined;
}

/**
 * Exits 1 with one message when there are problems, before the worker connects (a worker that cannot serve
 * must not look healthy and fail every job).
 */
export function exitOnProblems(worker: string, problems: readonly string[], hint: string): void {
  if (problems.length === 0) return;
  process.stderr.write(`${worker} cannot start:\n${problems.map((p) => `  - ${p}`).join('\n')}\n${hint}\n`);
  process.exit(1);
}

export const MODELS_HINT =
  'Mount the models folder read-only where BERTH_MODELS_DIR points (docker run -v /srv/models:/models:ro ..., readable by uid 1000: chmod -R a+rX /srv/models), or set BERTH_MODELS_DIR / IMAGE_MODEL / UPSCALER_X2_MODEL / UPSCALER_X4_MODEL.';
