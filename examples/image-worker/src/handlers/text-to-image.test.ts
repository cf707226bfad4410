import { join } from 'node:path';
import { runJob } from '@berth/worker/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { analyseScene, decode } from '../image/colours.test-helpers.js';
import { loadDiffusionModel } from '../pipeline/load.js';
import { modelsDir } from '../test-models.test-helpers.js';
import { createUpscaler } from '../upscale/upscaler.js';
import { fetchOutput, removeDir, startS3rver, useTempOutputDir } from './handlers.test-helpers.js';
import { createTextToImageHandler } from './text-to-image.js';

const outDir = useTempOutputDir();
afterAll(() => removeDir(outDir));

let loads = 0;
const handler = createTextToImageHandler({
  loadModel: () => {
    loads++;
    return loadDiffusionModel(join(modelsDir, 'tiny-sd'));
  },
  upscaler: createUpscaler({ 2: join(modelsDir, 'esrgan-x2'), 4: join(modelsDir, 'esrgan-x4') }),
});
const prompt = 'a big red circle on a blue background';

describe('text-to-image handler', () => {
  it('answers {image_url} with an image that follows the prompt, reporting progress per step', async () => {
    const r = await runJob(handler, { prompt, width: 64, height: 64, num_inference_steps: 20, guidance: 5, seed: 3 });
    expect(r.status).toBe('COMPLETED');
    const output = r.output as { image_url: string };
    expect(Object.keys(output)).toEqual(['image_url']);
    const img = await decode(await fetchOutput(output.image_url));
    expect([img.format, img.width, img.height]).toEqual(['png', 64, 64]);
    const scene = analyseScene(img);
    expect([scene.shape, scene.background]).toEqual(['red', 'blue']);
    expect(r.progress).toHaveLength(20);
    expect(r.progress[0]).toMatchObject({ stage: 'denoise', step: 1, total: 20 });
    expect(r.progress[19]).toMatchObject({ step: 20, total: 20, percent: 100 });
    expect(r.logs.some((l) => l.msg === 'model loaded' || l.msg === 'generating')).toBe(true);
  });

  it('applies defaults (native size, png), loads the model once, and the same seed gives identical bytes', async () => {
    const a = await runJob(handler, { prompt, seed: 11, num_inference_steps: 8 });
    const b = await runJob(handler, { prompt, seed: 11, num_inference_steps: 8 });
    const [ba, bb] = [
      await fetchOutput((a.output as { image_url: string }).image_url),
      await fetchOutput((b.output as { image_url: string }).image_url),
    ];
    expect(Buffer.compare(ba, bb)).toBe(0);
    expect((await decode(ba)).width).toBe(64);
    expect(loads).toBe(1);
  });

  it('honours output_format and non-square sizes (null fields count as absent)', async () => {
    const r = await runJob(handler, {
      prompt,
      width: 96,
      height: 48,
      output_format: 'webp',
      seed: 1,
      num_inference_steps: 8,
      negative_prompt: null,
      upscale: null,
    });
    const img = await decode(await fetchOutput((r.output as { image_url: string }).image_url));
    expect([img.format, img.width, img.height]).toEqual(['webp', 96, 48]);
    expect((r.output as { image_url: string }).image_url).toMatch(/\.webp$/);
  });

  it('upscale: 2 and 4 give images larger than the native size that still follow the prompt', async () => {
    for (const scale of [2, 4] as const) {
      const r = await runJob(handler, {
        prompt,
        seed: 3,
        num_inference_steps: 8,
        upscale: scale,
        output_format: 'jpeg',
      });
      expect(r.status).toBe('COMPLETED');
      const img = await decode(await fetchOutput((r.output as { image_url: string }).image_url));
      expect([img.format, img.width, img.height]).toEqual(['jpeg', 64 * scale, 64 * scale]);
      expect(analyseScene(img).shape).toBe('red');
      expect(r.progress.at(-1)).toEqual({ stage: 'upscale', scale });
    }
  });

  it('cancelling stops between denoising steps', async () => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 100); // 100 steps take well over a second
    const r = await runJob(handler, { prompt, seed: 1, num_inference_steps: 100 }, { signal: controller.signal });
    clearTimeout(timer);
    expect(r.status).toBe('CANCELLED');
    expect(r.progress.length).toBeLessThan(100);
  });

  it('uploads to S3 (a real s3rver) when the job carries s3Config', async () => {
    await using s3 = await startS3rver('images');
    const s3Config = { accessId: 'S3RVER', accessSecret: 'S3RVER', bucketName: 'images', endpointUrl: s3.endpoint };
    const r = await runJob(handler, { prompt, seed: 3, num_inference_steps: 4 }, { s3Config });
    const url = (r.output as { image_url: string }).image_url;
    expect(url.startsWith(`${s3.endpoint}/images/`)).toBe(true);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe(String(7 * 24 * 3600));
    expect((await decode(await fetchOutput(url))).format).toBe('png');
  });

  it.each([
    [{}, /invalid_input: prompt: must be a string \(got nothing\)/],
    [{ prompt: 42 }, /prompt: must be a string \(got 42\)/],
    [{ prompt, width: 66 }, /width: must be a multiple of 4, the model's VAE scale factor \(got 66\)/],
    [{ prompt, height: 1024 }, /height: must be from 32 to 128 for this model \(got 1024\); use "upscale"/],
    [{ prompt, width: 16 }, /width: must be from 32 to 128/],
    [{ prompt, num_inference_steps: 0 }, /num_inference_steps: must be at least 1 \(got 0\)/],
    [{ prompt, num_inference_steps: 2.5 }, /num_inference_steps: must be a whole number/],
    [{ prompt, guidance: 'high' }, /guidance: must be a number \(got "high"\)/],
    [{ prompt, seed: -1 }, /seed: must be at least 0/],
    [{ prompt, output_format: 'gif' }, /output_format: must be one of png, webp, jpeg \(got "gif"\)/],
    [{ prompt, upscale: 3 }, /upscale: must be 2 or 4 \(got 3\)/],
    [{ prompt, steps: 0 }, /steps: must be at least 1 \(got 0\)/],
    [{ prompt, stepz: 20 }, /unknown field "stepz"/],
    ['a string', /input: must be an object/],
  ])('bad input %j fails the job with a clear message', async (input, message) => {
    const r = await runJob(handler, input as never);
    expect(r.status).toBe('FAILED');
    expect(r.error).toMatch(/^invalid_input: /);
    expect(r.error).toMatch(message);
  });
});
