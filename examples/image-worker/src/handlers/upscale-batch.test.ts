import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, type Job } from '@berth/worker';
import { runJob } from '@berth/worker/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { decode } from '../image/colours.test-helpers.js';
import { modelsDir } from '../test-models.test-helpers.js';
import { createUpscaler } from '../upscale/upscaler.js';
import { fetchOutput, psnr, removeDir, useTempOutputDir } from './handlers.test-helpers.js';
import { createUpscaleHandler } from './upscale.js';
import { createBatchUpscaleHandler } from './upscale-batch.js';

const outDir = useTempOutputDir();
afterAll(() => removeDir(outDir));
const flower = readFileSync(join(modelsDir, 'fixtures/flower-128.png')).toString('base64');
const upscaler = createUpscaler({ 2: join(modelsDir, 'esrgan-x2'), 4: join(modelsDir, 'esrgan-x4') });
const batch = createBatchUpscaleHandler({ upscaler });

/** Jobs as the runtime hands them to a batch handler (the runtime itself is tested in packages/worker). */
function jobs(inputs: Record<string, unknown>[]): { jobs: Job<unknown>[]; progress: unknown[][] } {
  const progress: unknown[][] = inputs.map(() => []);
  const list = inputs.map((input, i) => ({
    id: `job-${i}`,
    input,
    attempt: 1,
    signal: new AbortController().signal,
    log: createLogger({ level: 'silent' }),
    progress: (v: unknown) => void progress[i]?.push(v),
  }));
  return { jobs: list, progress };
}

describe('batched upscale handler', () => {
  it('upscales several jobs in shared passes; a bad input fails only its slot; tiles match the whole-image result', async () => {
    const { jobs: batchJobs, progress } = jobs([
      { image: flower, scale: 2 },
      { image: 'not base64 !', scale: 2 },
      { image: flower, scale: 4, output_format: 'webp' },
      { image: flower, scale: 3 },
    ]);
    const outputs = await batch(batchJobs);
    expect(Array.isArray(outputs) && outputs.length).toBe(4);
    const [x2, bad, x4, badScale] = outputs as ({ image_url: string } | Error)[];
    expect(bad).toBeInstanceOf(Error);
    expect((bad as Error).message).toMatch(/^invalid_input: image: /);
    expect((badScale as Error).message).toMatch(/^invalid_input: scale: must be 2 or 4/);
    const big2 = await decode(await fetchOutput((x2 as { image_url: string }).image_url));
    const big4 = await decode(await fetchOutput((x4 as { image_url: string }).image_url));
    expect([big2.width, big2.height, big4.width, big4.height, big4.format]).toEqual([256, 256, 512, 512, 'webp']);
    expect(progress[0]).toEqual([{ stage: 'upscale', scale: 2, width: 128, height: 128 }]);
    // The same image upscaled whole (one pipeline call): the tiles differ only slightly, at their seams.
    const whole = await runJob(createUpscaleHandler({ upscaler }), { image: flower, scale: 2 });
    const wholeImg = await decode(await fetchOutput((whole.output as { image_url: string }).image_url));
    expect(psnr(big2.data, wholeImg.data)).toBeGreaterThan(35);
  }, 120_000);
});
