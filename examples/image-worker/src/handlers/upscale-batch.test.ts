import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runBatch, runJob } from '@berth/worker/testing';
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

describe('batched upscale handler', () => {
  it('upscales several jobs in shared passes; a bad input fails only its slot; tiles match the whole-image result', async () => {
    const [x2, bad, x4, badScale] = await runBatch(batch, [
      { image: flower, scale: 2 },
      { image: 'not base64 !', scale: 2 },
      { image: flower, scale: 4, output_format: 'webp' },
      { image: flower, scale: 3 },
    ]);
    expect(bad!.error).toMatch(/^invalid_input: image: /);
    expect(badScale!.error).toMatch(/^invalid_input: scale: must be 2 or 4/);
    const big2 = await decode(await fetchOutput((x2!.output as { image_url: string }).image_url));
    const big4 = await decode(await fetchOutput((x4!.output as { image_url: string }).image_url));
    expect([big2.width, big2.height, big4.width, big4.height, big4.format]).toEqual([256, 256, 512, 512, 'webp']);
    expect(x2!.progress).toEqual([{ stage: 'upscale', scale: 2, width: 128, height: 128 }]);
    // The same image upscaled whole (one pipeline call): the tiles differ only slightly, at their seams.
    const whole = await runJob(createUpscaleHandler({ upscaler }), { image: flower, scale: 2 });
    const wholeImg = await decode(await fetchOutput((whole.output as { image_url: string }).image_url));
    expect(psnr(big2.data, wholeImg.data)).toBeGreaterThan(35);
  }, 120_000);
});
