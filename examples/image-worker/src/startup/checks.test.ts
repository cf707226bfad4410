import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveModelLocations } from '../models/locations.js';
import { commandProblem, folderProblem, modelProblems } from './checks.js';

const MODELS = fileURLToPath(new URL('../../../../../shared/models', import.meta.url));
const WORKER = fileURLToPath(new URL('../../text-to-image.ts', import.meta.url));

describe('image worker startup checks', () => {
  it('the shared models pass; a missing folder or file is named', () => {
    expect(modelProblems(resolveModelLocations({ BERTH_MODELS_DIR: MODELS }), { image: true, upscale: true })).toEqual(
      [],
    );
    expect(
      modelProblems(resolveModelLocations({ BERTH_MODELS_DIR: '/nonexistent' }), { image: true, upscale: true }),
    ).toEqual([
      'model folder not found: /nonexistent/tiny-sd',
      'model folder not found: /nonexistent/esrgan-x2',
      'model folder not found: /nonexistent/esrgan-x4',
    ]);
    expect(folderProblem(join(MODELS, 'tiny-sd'), ['unet/missing.onnx'])).toBe(
      `model file missing: ${join(MODELS, 'tiny-sd/unet/missing.onnx')}`,
    );
    // Hub ids are downloaded on first use, not checked.
    expect(modelProblems(resolveModelLocations({}), { image: true, upscale: true })).toEqual([]);
    expect(commandProblem('/nonexistent/ffmpeg')).toBe('cannot run /nonexistent/ffmpeg: ENOENT');
    expect(commandProblem('ffmpeg')).toBeUndefined();
  });

  it('the worker exits 1 naming the path and the mount to add, before it connects', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', WORKER], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env['PATH'],
        BERTH_MODELS_DIR: '/models',
        BERTH_URL: 'http://127.0.0.1:9',
        BERTH_ENDPOINT_ID: 'image',
        BERTH_WORKER_TOKEN: 'berthw_x',
      },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('image worker cannot start:\n  - model folder not found: /models/tiny-sd');
    expect(r.stderr).toContain('docker run -v /srv/models:/models:ro');
    expect(r.stderr).not.toContain('connect');
  }, 60_000);
});
