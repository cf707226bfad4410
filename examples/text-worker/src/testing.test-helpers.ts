import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@berth/worker';
import { loadModel, type LoadedModel } from './load.js';
import { resolveTextWorkerOptions } from './options.js';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Test models: `BERTH_MODELS_DIR`, default `../shared/models` next to the repository. */
export const MODELS_DIR = process.env['BERTH_MODELS_DIR'] ?? resolve(REPO_ROOT, '../shared/models');
export const STORIES = join(MODELS_DIR, 'stories260K');

/** stories260K loaded with remote loading off. */
export function loadStories(): Promise<LoadedModel> {
  const o = resolveTextWorkerOptions({ model: STORIES }, {});
  return loadModel(o, createLogger({ level: 'warn' }));
}
