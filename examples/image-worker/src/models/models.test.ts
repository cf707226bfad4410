import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDiffusionModel } from '../pipeline/load.js';
import { modelsDir } from '../test-models.test-helpers.js';
import { DIFFUSION_FILES, ensureModelFolder } from './hub.js';
import { HUB_DEFAULTS, resolveModelLocations } from './locations.js';

describe('resolveModelLocations', () => {
  it('BERTH_MODELS_DIR: the shared folders, remote loading off', () => {
    expect(resolveModelLocations({ BERTH_MODELS_DIR: '/m' })).toEqual({
      image: '/m/tiny-sd',
      tokenizer: undefined,
      upscale: { 2: '/m/esrgan-x2', 4: '/m/esrgan-x4' },
      allowRemote: false,
      threads: undefined,
    });
  });
  it('nothing set: hub defaults, remote loading on; explicit variables win', () => {
    expect(resolveModelLocations({})).toEqual({
      image: HUB_DEFAULTS.image,
      tokenizer: HUB_DEFAULTS.tokenizer,
      upscale: { 2: HUB_DEFAULTS.upscaleX2, 4: HUB_DEFAULTS.upscaleX4 },
      allowRemote: true,
      threads: undefined,
    });
    const env = {
      BERTH_MODELS_DIR: '/m',
      IMAGE_MODEL: '/sd-turbo',
      IMAGE_TOKENIZER: '/tok',
      UPSCALER_X4_MODEL: 'org/x4',
    };
    expect(resolveModelLocations(env)).toMatchObject({
      image: '/sd-turbo',
      tokenizer: '/tok',
      upscale: { 2: '/m/esrgan-x2', 4: 'org/x4' },
    });
    expect(resolveModelLocations({ HF_HUB_OFFLINE: '1' }).allowRemote).toBe(false);
    expect(resolveModelLocations({ IMAGE_THREADS: '2' }).threads).toBe(2);
    expect(() => resolveModelLocations({ IMAGE_THREADS: 'many' })).toThrow(
      /IMAGE_THREADS must be a whole number from 1 to 64 \(got "many"\)/,
    );
  });
});

// A hub-shaped HTTP server on loopback (`/<org>/<repo>/resolve/main/<file>`) serving the tiny-sd folder.
describe('ensureModelFolder', () => {
  let server: Server;
  let endpoint: string;
  let cacheDir: string;
  const requests: string[] = [];
  beforeAll(async () => {
    cacheDir = mkdtempSync(join(tmpdir(), 'berth-hub-'));
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const m = /^\/test-org\/tiny-sd\/resolve\/main\/(.+)$/.exec(req.url ?? '');
      const file = m ? join(modelsDir, 'tiny-sd', decodeURIComponent(m[1] as string)) : '';
      if (file && !file.includes('..') && existsSync(file) && statSync(file).isFile())
        res.writeHead(200).end(readFileSync(file));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('returns an existing folder as it is', async () => {
    expect(await ensureModelFolder(join(modelsDir, 'tiny-sd'), DIFFUSION_FILES, { allowRemote: false })).toBe(
      join(modelsDir, 'tiny-sd'),
    );
  });

  it('downloads a hub repo once (optional files skipped on 404) into a folder the pipeline loads', async () => {
    const files: string[] = [];
    const dir = await ensureModelFolder('test-org/tiny-sd', DIFFUSION_FILES, {
      endpoint,
      cacheDir,
      onFile: (f) => files.push(f),
    });
    expect(files).toEqual(expect.arrayContaining(['model_index.json', 'unet/model.onnx', 'tokenizer/tokenizer.json']));
    expect(files).not.toContain('unet/model.onnx_data');
    const model = await loadDiffusionModel(dir);
    expect(model.nativeSize).toBe(64);
    const before = requests.length;
    await ensureModelFolder('test-org/tiny-sd', DIFFUSION_FILES, { endpoint, cacheDir });
    expect(requests.length - before).toBe(
      DIFFUSION_FILES.optional.length - files.filter((f) => DIFFUSION_FILES.optional.includes(f)).length,
    );
  });

  it('fails clearly: remote off, missing required file, not a hub id', async () => {
    await expect(
      ensureModelFolder('test-org/tiny-sd', DIFFUSION_FILES, { allowRemote: false, cacheDir }),
    ).rejects.toThrow(/remote loading is off/);
    await expect(ensureModelFolder('test-org/other', DIFFUSION_FILES, { endpoint, cacheDir })).rejects.toThrow(
      /downloading test-org\/other\/model_index\.json: HTTP 404/,
    );
    await expect(ensureModelFolder('/no/such/folder', DIFFUSION_FILES, { endpoint, cacheDir })).rejects.toThrow(
      /model folder not found/,
    );
  });
});
