import { describe, expect, it } from 'vitest';
import { deviceSetting, loadOnDevice, type Device } from './device.js';

describe('BERTH_DEVICE', () => {
  it('defaults to auto; accepts cpu and cuda; refuses anything else', () => {
    expect(deviceSetting({})).toBe('auto');
    expect(deviceSetting({ BERTH_DEVICE: ' CUDA ' })).toBe('cuda');
    expect(deviceSetting({ BERTH_DEVICE: 'cpu' })).toBe('cpu');
    expect(() => deviceSetting({ BERTH_DEVICE: 'gpu' })).toThrow('BERTH_DEVICE must be auto, cpu or cuda (got "gpu")');
  });

  const loader = (cudaWorks: boolean) => {
    const tried: Device[] = [];
    const load = async (d: Device) => {
      tried.push(d);
      if (d === 'cuda' && !cudaWorks)
        throw new Error('OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library\nmore');
      return `session on ${d}`;
    };
    return { tried, load };
  };

  it('auto: CUDA when it loads, else the CPU with one clear log line', async () => {
    const lines: string[] = [];
    const gpu = loader(true);
    expect(await loadOnDevice(gpu.load, { env: {}, log: (l) => lines.push(l), gpuPresent: () => true })).toEqual({
      device: 'cuda',
      value: 'session on cuda',
    });
    expect(gpu.tried).toEqual(['cuda']);
    const none = loader(false);
    expect(
      await loadOnDevice(none.load, {
        env: { BERTH_DEVICE: 'auto' },
        log: (l) => lines.push(l),
        gpuPresent: () => true,
      }),
    ).toEqual({ device: 'cpu', value: 'session on cpu' });
    expect(none.tried).toEqual(['cuda', 'cpu']);
    expect(lines).toEqual([
      'device: cuda (BERTH_DEVICE=auto)',
      'device: cpu (CUDA did not load: OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library; set BERTH_DEVICE=cpu to skip trying)',
    ]);
  });

  it('auto without an NVIDIA driver loads on the CPU without trying CUDA (no native error), with one log line', async () => {
    const lines: string[] = [];
    const l = loader(true);
    expect(await loadOnDevice(l.load, { env: {}, log: (x) => lines.push(x), gpuPresent: () => false })).toEqual({
      device: 'cpu',
      value: 'session on cpu',
    });
    expect(l.tried).toEqual(['cpu']);
    expect(lines).toEqual([
      'device: cpu (no NVIDIA driver: /dev/nvidiactl is missing; run the container with --gpus all for CUDA)',
    ]);
  });

  it('cpu never tries CUDA; cuda fails loudly when CUDA does not load', async () => {
    const cpu = loader(true);
    expect((await loadOnDevice(cpu.load, { env: { BERTH_DEVICE: 'cpu' }, log: () => {} })).device).toBe('cpu');
    expect(cpu.tried).toEqual(['cpu']);
    await expect(loadOnDevice(loader(false).load, { env: { BERTH_DEVICE: 'cuda' }, log: () => {} })).rejects.toThrow(
      'BERTH_DEVICE=cuda but the model did not load on CUDA: OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library',
    );
  });
});
