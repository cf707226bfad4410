import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { modelsDir } from '../test-models.test-helpers.js';
import { generateImage } from './generate.js';
import { loadDiffusionModel, type DiffusionModel } from './load.js';
import { onnxModel, type GraphValue } from './onnx-graph.test-helpers.js';

// tiny-sd with its UNet swapped for a hand-written graph whose inputs declare other dtypes and shapes (as fp16
// exports such as SD-Turbo's do). onnxruntime refuses a feed of the wrong type, so running at all shows the
// pipeline followed the metadata; the recorded feeds show how.
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function withUnet(
  timestep: GraphValue,
  floatType: 'float16' | 'float32',
): Promise<{
  model: DiffusionModel;
  feeds: Record<string, { type: string; dims: readonly number[]; first: number | bigint }>[];
}> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-fake-sd-'));
  dirs.push(dir);
  cpSync(join(modelsDir, 'tiny-sd'), dir, { recursive: true });
  const sample: GraphValue = { name: 'sample', type: floatType, shape: ['batch', 4, 'h', 'w'] };
  const graph = onnxModel(
    [sample, timestep, { name: 'encoder_hidden_states', type: floatType, shape: ['batch', 'seq', 128] }],
    [{ name: 'out_sample', type: floatType, shape: ['batch', 4, 'h', 'w'] }],
    [{ op: 'Identity', inputs: ['sample'], outputs: ['out_sample'] }],
  );
  rmSync(join(dir, 'unet/model.onnx'), { force: true });
  writeFileSync(join(dir, 'unet/model.onnx'), graph);
  const model = await loadDiffusionModel(dir);
  const feeds: Record<string, { type: string; dims: readonly number[]; first: number | bigint }>[] = [];
  const run = model.unet.run.bind(model.unet);
  const recording = Object.assign(Object.create(model.unet) as ort.InferenceSession, {
    run: (f: Record<string, ort.Tensor>) => {
      feeds.push(
        Object.fromEntries(
          Object.entries(f).map(([k, t]) => [
            k,
            { type: t.type, dims: t.dims, first: (t.data as ArrayLike<number | bigint>)[0] as number | bigint },
          ]),
        ),
      );
      return run(f);
    },
  });
  return { model: { ...model, unet: recording }, feeds };
}

const params = {
  prompt: 'a big red circle on a blue background',
  width: 64,
  height: 64,
  steps: 3,
  guidance: 5,
  seed: 1,
};

describe('dtypes follow the UNet input metadata', () => {
  it('float16 sample and hidden states, a float32 scalar timestep', async () => {
    const { model, feeds } = await withUnet({ name: 'timestep', type: 'float32', shape: [] }, 'float16');
    const img = await generateImage(model, params);
    expect([img.width, img.height]).toEqual([64, 64]);
    expect(feeds).toHaveLength(3);
    expect(feeds[0]).toMatchObject({
      sample: { type: 'float16', dims: [2, 4, 16, 16] },
      timestep: { type: 'float32', dims: [], first: 667 }, // 3 leading steps: 667, 334, 1
      encoder_hidden_states: { type: 'float16', dims: [2, 16, 128] },
    });
  });

  it('an int32 timestep sharing the batch dimension is given once per batch item', async () => {
    const { model, feeds } = await withUnet({ name: 'timestep', type: 'int32', shape: ['batch'] }, 'float32');
    await generateImage(model, params);
    expect(feeds[1]).toMatchObject({ timestep: { type: 'int32', dims: [2], first: 334 }, sample: { type: 'float32' } });
    await generateImage(model, { ...params, guidance: 0 });
    expect(feeds.at(-1)).toMatchObject({ timestep: { type: 'int32', dims: [1] }, sample: { dims: [1, 4, 16, 16] } });
  });

  it('tiny-sd itself: int64 timestep of symbolic length is given as [1]', async () => {
    const model = await loadDiffusionModel(join(modelsDir, 'tiny-sd'));
    expect(model.unet.inputMetadata.find((m) => m.name === 'timestep')).toMatchObject({
      type: 'int64',
      shape: ['steps'],
    });
    const fake = await withUnet({ name: 'timestep', type: 'int64', shape: ['steps'] }, 'float32');
    await generateImage(fake.model, params);
    expect(fake.feeds[0]).toMatchObject({ timestep: { type: 'int64', dims: [1], first: 667n } });
  });

  it('a UNet needing inputs the pipeline does not provide (SDXL) fails clearly', async () => {
    const { model } = await withUnet({ name: 'timestep', type: 'int64', shape: [1] }, 'float32');
    const original = model.unet;
    const sdxl = Object.defineProperty(Object.create(original) as ort.InferenceSession, 'inputNames', {
      value: [...original.inputNames, 'text_embeds', 'time_ids'],
    });
    await expect(generateImage({ ...model, unet: sdxl }, params)).rejects.toThrow(
      /needs inputs this pipeline does not provide: text_embeds, time_ids/,
    );
  });
});
