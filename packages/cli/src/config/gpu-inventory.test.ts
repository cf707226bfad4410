import { describe, expect, it } from 'vitest';
import { gpuInventory, parseNvidiaSmiList } from './gpu-inventory.js';
import { resolveConfig } from './resolve.js';

const SMI = `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5f1c2a9e-0000-0000-0000-000000000000)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-6a2d3b0f-0000-0000-0000-000000000000)
`;

const config = (o: object) => resolveConfig(o, '/p/berth.config.json');

describe('the GPU inventory', () => {
  it('is the config list when given, else what nvidia-smi -L lists; nothing is run when no endpoint needs GPUs', () => {
    let ran = 0;
    const smi = () => (ran++, SMI);
    const withList = config({
      gpus: { devices: ['GPU-a', 'GPU-b', 'GPU-c'] },
      endpoints: { a: { worker: './a.ts', gpusPerWorker: 2 } },
    });
    expect(gpuInventory(withList, ['a'], smi)).toEqual(['GPU-a', 'GPU-b', 'GPU-c']);
    expect(ran).toBe(0);
    const discovered = config({ endpoints: { a: { worker: './a.ts', gpusPerWorker: 1 }, b: { worker: './b.ts' } } });
    expect(gpuInventory(discovered, ['a', 'b'], smi)).toEqual(['0', '1']);
    expect(ran).toBe(1);
    expect(gpuInventory(discovered, ['b'], smi)).toBeUndefined();
    expect(ran).toBe(1);
    expect(parseNvidiaSmiList('No devices were found\n')).toEqual([]);
  });

  it('is a clear config error when none is known, or when a worker needs more than the box has', () => {
    const c = config({ endpoints: { a: { worker: './a.ts', gpusPerWorker: 3 } } });
    const missing = () => {
      throw new Error('spawnSync nvidia-smi ENOENT');
    };
    expect(() => gpuInventory(c, ['a'], missing)).toThrow(
      /endpoint a has "gpusPerWorker" and no GPU is known: list them in \/p\/berth.config.json as "gpus": \{"devices": \["0", "1"\]\}, or install the NVIDIA driver \(nvidia-smi -L listed none: spawnSync nvidia-smi ENOENT\)/,
    );
    expect(() => gpuInventory(c, ['a'], () => SMI)).toThrow(
      /endpoint a: "gpusPerWorker" 3 is more than the 2 GPU\(s\) of nvidia-smi -L \(0, 1\)/,
    );
    expect(() => config({ gpus: { devices: ['0', '0'] }, endpoints: { a: { worker: './a.ts' } } })).toThrow(
      /gpus\.devices: must not list a device twice/,
    );
    expect(() => config({ gpus: { devices: [] }, endpoints: { a: { worker: './a.ts' } } })).toThrow(
      /gpus\.devices: must list at least one device/,
    );
    expect(() => config({ gpus: { list: ['0'] }, endpoints: { a: { worker: './a.ts' } } })).toThrow(
      /gpus: unknown field "list" \(known: devices\)/,
    );
  });
});
