import { fileURLToPath } from 'node:url';
import { nvidiaDriverPresent } from '@berth/worker';
import { describe, expect, it } from 'vitest';
import { resolveModelLocations } from './models/locations.js';
import { loadImageModel } from './setup.js';

const MODELS = fileURLToPath(new URL('../../../../shared/models', import.meta.url));

// There is no GPU here: BERTH_DEVICE=auto (the default) must land on the CPU with one log line and still load a
// working model. With no NVIDIA driver it does not try CUDA (onnxruntime would print a native error); with a
// driver but no working CUDA it tries for real and falls back.
describe.runIf(process.env['BERTH_DEVICE'] === undefined)('image worker device selection (no GPU here)', () => {
  it('auto: the CUDA execution provider does not load, so the CPU is used and said once', async () => {
    const lines: [string, Record<string, unknown>][] = [];
    const model = await loadImageModel(resolveModelLocations({ BERTH_MODELS_DIR: MODELS }), (msg, fields) =>
      lines.push([msg, fields]),
    );
    const device = lines.filter(([m]) => m.startsWith('device: '));
    expect(device).toHaveLength(1);
    expect(device[0]![0]).toMatch(
      nvidiaDriverPresent()
        ? /^device: cpu \(CUDA did not load: .+; set BERTH_DEVICE=cpu to skip trying\)$/
        : /^device: cpu \(no NVIDIA driver: \/dev\/nvidiactl is missing; .+\)$/,
    );
    expect(lines.find(([m]) => m === 'model loaded')?.[1]).toMatchObject({ device: 'cpu' });
    expect(model.unet.inputNames.length).toBeGreaterThan(0);
  }, 120_000);
});
