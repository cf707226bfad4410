import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveModelLocations } from './models/locations.js';
import { loadImageModel } from './setup.js';

const MODELS = fileURLToPath(new URL('../../../../shared/models', import.meta.url));

// There is no GPU here: BERTH_DEVICE=auto (the default) must try CUDA for real, fall back to the CPU with one
// log line, and still load a working model.
describe.runIf(process.env['BERTH_DEVICE'] === undefined)('image worker device selection (no GPU here)', () => {
  it('auto: the CUDA execution provider does not load, so the CPU is used and said once', async () => {
    const lines: [string, Record<string, unknown>][] = [];
    const model = await loadImageModel(resolveModelLocations({ BERTH_MODELS_DIR: MODELS }), (msg, fields) => lines.push([msg, fields]));
    const device = lines.filter(([m]) => m.startsWith('device: '));
    expect(device).toHaveLength(1);
    expect(device[0]![0]).toMatch(/^device: cpu \(CUDA did not load: .+; set BERTH_DEVICE=cpu to skip trying\)$/);
    expect(lines.find(([m]) => m === 'model loaded')?.[1]).toMatchObject({ device: 'cpu' });
    expect(model.unet.inputNames.length).toBeGreaterThan(0);
  }, 120_000);
});
