import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyseScene, decode } from '../../examples/image-worker/src/image/colours.test-helpers.js';
import { encodeImage } from '../../examples/image-worker/src/image/encode.js';
import { modelsDir } from '../../examples/image-worker/src/test-models.test-helpers.js';
import { generateImage, type GenerateParams } from '../../examples/image-worker/src/pipeline/generate.js';
import { loadDiffusionModel, type DiffusionModel } from '../../examples/image-worker/src/pipeline/load.js';

let model: DiffusionModel;
beforeAll(async () => {
  model = await loadDiffusionModel(join(modelsDir, 'tiny-sd'));
});

const base: GenerateParams = {
  prompt: 'a big red circle on a blue background',
  width: 64,
  height: 64,
  steps: 20,
  guidance: 5,
  seed: 1,
};
const png = async (params: Partial<GenerateParams> = {}) =>
  encodeImage(await generateImage(model, { ...base, ...params }), 'png');

describe('loadDiffusionModel (tiny-sd)', () => {
  it('reads sizes and factors from the part configs', () => {
    expect(model).toMatchObject({ vaeScaleFactor: 4, nativeSize: 64, latentChannels: 4, maxLength: 16 });
    expect(model.scalingFactor).toBeCloseTo(1.0812362432479858, 12);
    expect(model.scheduler._class_name).toBe('EulerDiscreteScheduler');
  });

  it('names what is missing in a folder that is not an export', async () => {
    await expect(loadDiffusionModel(join(modelsDir, 'esrgan-x2'))).rejects.toThrow(
      /model_index\.json is missing|is missing/,
    );
  });
});

describe('generateImage (tiny-sd)', () => {
  it('follows the prompt: a red shape on a blue background', async () => {
    const scene = analyseScene(await decode(await png()));
    expect(scene.background).toBe('blue');
    expect(scene.backgroundShare).toBeGreaterThan(0.9);
    expect(scene.shape).toBe('red');
    expect(scene.shapeShare).toBeGreaterThan(0.8);
    expect(scene.shapePixels).toBeGreaterThan(64 * 64 * 0.08); // "big"
  });

  it('a different prompt gives a different image that follows it', async () => {
    const [a, b] = [await png(), await png({ prompt: 'a big yellow square on a green background' })];
    expect(Buffer.compare(a, b)).not.toBe(0);
    const scene = analyseScene(await decode(b));
    expect([scene.shape, scene.background]).toEqual(['yellow', 'green']);
  });

  it('the same seed gives identical bytes; another seed a different image', async () => {
    const [a, b, c] = [
      await png({ seed: 7, steps: 10 }),
      await png({ seed: 7, steps: 10 }),
      await png({ seed: 8, steps: 10 }),
    ];
    expect(Buffer.compare(a, b)).toBe(0);
    expect(Buffer.compare(a, c)).not.toBe(0);
  });

  it('honours width and height (multiples of the VAE factor) and refuses others', async () => {
    const img = await generateImage(model, { ...base, width: 96, height: 48 });
    expect([img.width, img.height, img.data.length]).toEqual([96, 48, 96 * 48 * 3]);
    const scene = analyseScene({ ...img, format: 'raw' });
    expect([scene.shape, scene.background]).toEqual(['red', 'blue']);
    await expect(generateImage(model, { ...base, width: 66 })).rejects.toThrow(/multiples of 4/);
  });

  it('encodes png, webp and jpeg', async () => {
    const img = await generateImage(model, base);
    for (const format of ['png', 'webp', 'jpeg'] as const) {
      const decoded = await decode(await encodeImage(img, format));
      expect([decoded.format, decoded.width, decoded.height]).toEqual([format, 64, 64]);
    }
  });

  it('batched guidance (one UNet call) matches two separate calls', async () => {
    const batched = await generateImage(model, base, { batchGuidance: true });
    const separate = await generateImage(model, base, { batchGuidance: false });
    let maxDiff = 0;
    for (let i = 0; i < batched.data.length; i++)
      maxDiff = Math.max(maxDiff, Math.abs((batched.data[i] as number) - (separate.data[i] as number)));
    expect(maxDiff).toBeLessThanOrEqual(2);
  });

  it('guidance changes the result, and guidance <= 1 skips the unconditional pass', async () => {
    const calls: number[] = [];
    const original = model.unet.run.bind(model.unet);
    const counting = Object.assign(Object.create(model.unet) as typeof model.unet, {
      run: (feeds: Parameters<typeof original>[0]) => {
        calls.push((feeds['sample'] as { dims: readonly number[] }).dims[0] as number);
        return original(feeds);
      },
    });
    const noGuidance = await generateImage({ ...model, unet: counting }, { ...base, guidance: 1, steps: 4 });
    expect(calls).toEqual([1, 1, 1, 1]);
    const guided = await generateImage(model, { ...base, steps: 4 });
    expect(Buffer.compare(noGuidance.data, guided.data)).not.toBe(0);
  });

  it('the negative prompt is the unconditional branch: it changes the image', async () => {
    const plain = await generateImage(model, { ...base, steps: 8 });
    const negative = await generateImage(model, {
      ...base,
      steps: 8,
      negativePrompt: 'a small green square on a yellow background',
    });
    expect(Buffer.compare(plain.data, negative.data)).not.toBe(0);
    expect(analyseScene({ ...negative, format: 'raw' }).shape).toBe('red');
  });

  it('DDIM also follows the prompt', async () => {
    const img = await generateImage(model, {
      ...base,
      scheduler: 'ddim',
      prompt: 'a big green triangle on a white background',
    });
    const scene = analyseScene({ ...img, format: 'raw' });
    expect([scene.shape, scene.background]).toEqual(['green', 'white']);
  });

  it('reports every step and stops when aborted', async () => {
    const steps: string[] = [];
    await generateImage(model, { ...base, steps: 5 }, { onStep: (s, t) => steps.push(`${s}/${t}`) });
    expect(steps).toEqual(['1/5', '2/5', '3/5', '4/5', '5/5']);
    const controller = new AbortController();
    const run = generateImage(
      model,
      { ...base, steps: 50 },
      { signal: controller.signal, onStep: (s) => s === 3 && controller.abort(new Error('stop')) },
    );
    await expect(run).rejects.toThrow('stop');
  });
});
