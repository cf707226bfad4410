import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBatch, runJob } from '@berth/worker/testing';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { batchHandler, handler, type Input } from './handler.js';

// The model comes from BERTH_MODELS_DIR (without it, the handler says to set it); in the Berth repository, from
// ../shared/models next to the checkout when that folder is there.
const shared = fileURLToPath(new URL('../../../../shared/models', import.meta.url));
if (!process.env['BERTH_MODELS_DIR'] && existsSync(join(shared, 'tiny-sd'))) process.env['BERTH_MODELS_DIR'] = shared;
const testInput = JSON.parse(readFileSync(new URL('../test_input.json', import.meta.url), 'utf8')) as {
  input: z.input<typeof Input>;
};

/** Share of pixels close to a colour. */
async function share(base64: string, [r, g, b]: [number, number, number]): Promise<number> {
  const { data, info } = await sharp(Buffer.from(base64, 'base64')).raw().toBuffer({ resolveWithObject: true });
  let hits = 0;
  for (let i = 0; i < data.length; i += info.channels) {
    if (Math.abs(data[i]! - r) + Math.abs(data[i + 1]! - g) + Math.abs(data[i + 2]! - b) < 200) hits++;
  }
  return hits / (data.length / info.channels);
}

describe('image handler', () => {
  it('draws test_input.json: a red circle on blue, as a PNG, with progress per step', async () => {
    const result = await runJob(handler, testInput.input);
    expect(result.status, result.error).toBe('COMPLETED');
    const out = result.output as { image_base64: string; width: number; height: number };
    expect([out.width, out.height]).toEqual([64, 64]);
    expect(result.progress).toHaveLength(20);
    const blue = await share(out.image_base64, [0, 0, 255]);
    const red = await share(out.image_base64, [255, 0, 0]);
    expect(blue).toBeGreaterThan(0.3);
    expect(red).toBeGreaterThan(0.03);
  }, 60_000);

  it('the same seed gives the same image', async () => {
    const input = { prompt: 'a small green square on a gray background', steps: 4, seed: 7 };
    const [a, b] = await Promise.all([runJob(handler, input), runJob(handler, input)]);
    expect((a.output as { image_base64: string }).image_base64).toBe(
      (b.output as { image_base64: string }).image_base64,
    );
  }, 60_000);

  it('takes num_inference_steps, like the public image models; steps is the same field', async () => {
    const [a, b] = await Promise.all([
      runJob(handler, { prompt: 'a red dot', num_inference_steps: 3, seed: 2 }),
      runJob(handler, { prompt: 'a red dot', steps: 3, seed: 2 }),
    ]);
    expect([a.status, a.progress.length, b.progress.length]).toEqual(['COMPLETED', 3, 3]);
    expect((a.output as { image_base64: string }).image_base64).toBe(
      (b.output as { image_base64: string }).image_base64,
    );
  }, 60_000);

  it('rejects a size that is not a multiple of 4', async () => {
    const result = await runJob(handler, { prompt: 'x', width: 30 });
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatch(/width/);
  });
});

describe('batch handler', () => {
  it('draws several prompts in shared passes, each as it would be drawn alone; a bad input fails only its job', async () => {
    const inputs = [
      { prompt: 'a small green square on a gray background', steps: 3, seed: 7 },
      { prompt: 'a big red circle on a blue background', steps: 3, seed: 1 },
      { prompt: 'x', width: 30 },
    ];
    const outputs = await runBatch(batchHandler, inputs);
    expect(outputs[2]!.error).toMatch(/^invalid_input: width: /);
    const alone = await Promise.all(inputs.slice(0, 2).map((input) => runJob(handler, input)));
    for (const k of [0, 1]) {
      const a = await sharp(Buffer.from((outputs[k]!.output as { image_base64: string }).image_base64, 'base64'))
        .raw()
        .toBuffer();
      const b = await sharp(Buffer.from((alone[k]!.output as { image_base64: string }).image_base64, 'base64'))
        .raw()
        .toBuffer();
      // Batched float math may differ in the last bits; the picture is the same.
      let diff = 0;
      for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
      expect(diff).toBeLessThanOrEqual(2);
      expect(outputs[k]!.progress).toEqual([1, 2, 3].map((step) => ({ step, of: 3 })));
    }
  }, 120_000);
});
