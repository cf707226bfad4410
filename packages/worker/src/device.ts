import { existsSync } from 'node:fs';

/** Where a model runs. */
export type Device = 'cpu' | 'cuda';
/** `BERTH_DEVICE`: `auto` (default) tries CUDA and falls back to the CPU; `cpu` and `cuda` force one. */
export type DeviceSetting = 'auto' | Device;

/** Reads `BERTH_DEVICE` (default `auto`). @throws Error naming the bad value. */
export function deviceSetting(env: NodeJS.ProcessEnv = process.env): DeviceSetting {
  const raw = env['BERTH_DEVICE']?.trim().toLowerCase() || 'auto';
  if (raw === 'auto' || raw === 'cpu' || raw === 'cuda') return raw;
  throw new Error(`BERTH_DEVICE must be auto, cpu or cuda (got ${JSON.stringify(env['BERTH_DEVICE'])})`);
}

/**
 * Loads a model on the device `BERTH_DEVICE` asks for. `auto`: `load('cuda')`, and when that throws (no GPU, no
 * driver, CUDA execution provider not installed), one log line and `load('cpu')`. `cuda`: a failure is an error
 * naming the setting. `cpu`: CUDA is not tried.
 *
 * @example
 * const { device, value: session } = await loadOnDevice(
 *   (d) => ort.InferenceSession.create(file, { executionProviders: d === 'cuda' ? ['cuda', 'cpu'] : ['cpu'] }),
 *   { log: (line) => job.log.info(line) },
 * );
 */
export async function loadOnDevice<T>(
  load: (device: Device) => Promise<T>,
  o: { env?: NodeJS.ProcessEnv; log?: (line: string) => void; gpuPresent?: () => boolean } = {},
): Promise<{ device: Device; value: T }> {
  const setting = deviceSetting(o.env);
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (setting === 'cpu') return { device: 'cpu', value: await load('cpu') };
  // auto on a machine with no NVIDIA driver: CUDA cannot load, and trying makes onnxruntime print a native error.
  if (setting === 'auto' && !(o.gpuPresent ?? nvidiaDriverPresent)()) {
    log('device: cpu (no NVIDIA driver: /dev/nvidiactl is missing; run the container with --gpus all for CUDA)');
    return { device: 'cpu', value: await load('cpu') };
  }
  try {
    const value = await load('cuda');
    log(`device: cuda (BERTH_DEVICE=${setting})`);
    return { device: 'cuda', value };
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    if (setting === 'cuda') throw new Error(`BERTH_DEVICE=cuda but the model did not load on CUDA: ${why}`);
    log(`device: cpu (CUDA did not load: ${why}; set BERTH_DEVICE=cpu to skip trying)`);
    return { device: 'cpu', value: await load('cpu') };
  }
}

/** Whether an NVIDIA driver is visible (its control device, which `docker run --gpus all` maps in). */
export function nvidiaDriverPresent(): boolean {
  return existsSync('/dev/nvidiactl') || existsSync('/proc/driver/nvidia/version');
}
