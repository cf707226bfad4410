import { execFileSync } from 'node:child_process';
import { ConfigError } from '@berth/protocol';
import type { ResolvedConfig } from './types.js';

/** Runs `nvidia-smi -L` and returns its output; throws when it is not installed or fails. */
function nvidiaSmiList(): string {
  return execFileSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The GPU indexes of `nvidia-smi -L` (`GPU 0: NVIDIA A100 (UUID: GPU-…)` lines). */
export function parseNvidiaSmiList(out: string): string[] {
  return [...out.matchAll(/^GPU (\d+):/gm)].map((m) => m[1]!);
}

/**
 * The box's GPUs that `gpusPerWorker` hands out: the config's `gpus.devices`, else what `nvidia-smi -L` lists;
 * undefined when no endpoint of the config needs GPUs (nothing is run then).
 *
 * @throws ConfigError when an endpoint needs GPUs and none are known (no list, no nvidia-smi or no GPU), or needs
 *   more per worker than the box has.
 */
export function gpuInventory(
  config: ResolvedConfig,
  endpointIds: readonly string[],
  list: () => string = nvidiaSmiList,
): string[] | undefined {
  const needing = config.endpoints.filter((e) => endpointIds.includes(e.id) && (e.gpusPerWorker ?? 0) > 0);
  if (needing.length === 0) return undefined;
  let devices = config.gpus?.devices;
  let where = `"gpus" in ${config.file}`;
  if (!devices) {
    let out = '';
    let why = '';
    try {
      out = list();
    } catch (err) {
      why = `: ${(err as Error).message.split('\n')[0]}`;
    }
    devices = parseNvidiaSmiList(out);
    where = 'nvidia-smi -L';
    if (devices.length === 0)
      throw new ConfigError(
        `endpoint ${needing[0]!.id} has "gpusPerWorker" and no GPU is known: list them in ${config.file} as "gpus": {"devices": ["0", "1"]}, or install the NVIDIA driver (nvidia-smi -L listed none${why})`,
        { file: config.file, problems: [] },
      );
  }
  for (const ep of needing)
    if ((ep.gpusPerWorker ?? 0) > devices.length)
      throw new ConfigError(
        `endpoint ${ep.id}: "gpusPerWorker" ${ep.gpusPerWorker} is more than the ${devices.length} GPU(s) of ${where} (${devices.join(', ')})`,
        { file: config.file, problems: [] },
      );
  return devices;
}
