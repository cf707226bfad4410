import { loadOnDevice } from '@berth/worker';
import { env } from '@huggingface/transformers';
import { DIFFUSION_FILES, ensureModelFolder } from './models/hub.js';
import { resolveModelLocations, type ModelLocations } from './models/locations.js';
import { loadDiffusionModel, type DiffusionModel } from './pipeline/load.js';
import { createUpscaler, type Upscaler } from './upscale/upscaler.js';

/**
 * Reads the model locations from the environment (see `resolveModelLocations`) and sets transformers.js remote
 * loading accordingly (off with `BERTH_MODELS_DIR`).
 */
export function configureModels(processEnv: NodeJS.ProcessEnv = process.env): ModelLocations {
  const where = resolveModelLocations(processEnv);
  env.allowRemoteModels = where.allowRemote;
  env.allowLocalModels = true;
  return where;
}

/** Loads the diffusion model at `where.image` (downloading a hub repo once when allowed). */
export async function loadImageModel(
  where: ModelLocations,
  log?: (msg: string, fields: Record<string, unknown>) => void,
): Promise<DiffusionModel> {
  const dir = await ensureModelFolder(where.image, DIFFUSION_FILES, {
    allowRemote: where.allowRemote,
    onFile: (file, bytes) => log?.('downloaded', { model: where.image, file, bytes }),
  });
  // BERTH_DEVICE (default auto): the CUDA execution provider when it loads, else the CPU (one log line says which).
  const { device, value: model } = await loadOnDevice(
    (d) =>
      loadDiffusionModel(dir, {
        ...(where.tokenizer ? { tokenizer: where.tokenizer } : {}),
        sessionOptions: {
          executionProviders: d === 'cuda' ? ['cuda', 'cpu'] : ['cpu'],
          graphOptimizationLevel: 'all',
          ...(where.threads ? { intraOpNumThreads: where.threads } : {}),
        },
      }),
    log ? { log: (line) => log(line, { model: where.image }) } : {},
  );
  log?.('model loaded', {
    model: where.image,
    device,
    seconds: Number(model.loadSeconds.toFixed(3)),
    nativeSize: model.nativeSize,
  });
  return model;
}

/** The ESRGAN upscaler for `where.upscale` (models load on first use). */
export function createImageUpscaler(where: ModelLocations): Upscaler {
  return createUpscaler(where.upscale, where.threads ? { intraOpNumThreads: where.threads } : {});
}
