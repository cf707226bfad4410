import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `BERTH_MODELS_DIR`, else `../shared/models` relative to the repository root (as the project's tests agree). */
export const modelsDir =
  process.env['BERTH_MODELS_DIR'] ?? resolve(dirname(fileURLToPath(import.meta.url)), '../../../../shared/models');

if (!existsSync(join(modelsDir, 'tiny-sd')))
  throw new Error(`test models not found in ${modelsDir}; set BERTH_MODELS_DIR`);
