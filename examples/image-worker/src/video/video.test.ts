import { join } from 'node:path';
import type { Job } from '@berth/worker';
import { runJob } from '@berth/worker/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchOutput, removeDir, useTempOutputDir } from '../handlers/handlers.test-helpers.js';
import { gaussianNoise } from '../noise/gaussian.js';
import { generateImage } from '../pipeline/generate.js';
import { loadDiffusionModel } from '../pipeline/load.js';
import { modelsDir } from '../test-models.test-helpers.js';
import { generateFrames } from './frames.js';
import { createTextToVideoHandler, type TextToVideoOutput } from './handler.js';
import { frameT, slerp } from './interpolate.js';
import { colourShares, mp4Frames, probeVideo, webpFrames } from './probe.test-helpers.js';

const outDir = useTempOutputDir();
afterAll(() => removeDir(outDir));
const model = loadDiffusionModel(join(modelsDir, 'tiny-sd'));
const handler = createTextToVideoHandler({ loadModel: () => model });
const blue = 'a big red circle on a blue background';
const green = 'a big red circle on a green background';
const maxDiff = (a: Uint8Array, b: Uint8Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

async function clip(input: Record<string, unknown>) {
  const r = await runJob(handler, input);
  expect(r.status, r.error).toBe('COMPLETED');
  const output = r.output as TextToVideoOutput;
  return {
    output,
    bytes: await fetchOutput(output.video_url),
    progress: r.progress as { stage: string; frame?: number }[],
  };
}

describe('slerp', () => {
  it('keeps the norm of Gaussian noise halfway between two seeds, ends exactly at the first', () => {
    const [a, b] = [gaussianNoise(4096, 1), gaussianNoise(4096, 2)];
    const norm = (x: Float32Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0));
    expect(norm(slerp(a, b, 0.5)) / norm(a)).toBeGreaterThan(0.95);
    expect(slerp(a, b, 0)).toEqual(a);
    expect(maxDiffF(slerp(a, b, 1), b)).toBeLessThan(1e-4);
    expect([frameT(0, 5), frameT(2, 5), frameT(4, 5)]).toEqual([0, 0.5, 1]);
  });
});
const maxDiffF = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

describe('text-to-video frames', () => {
  it('the first and last frames are the text-to-image results of (prompt, seed) and (prompt_end, seed_end); colours move from blue to green', async () => {
    const m = await model;
    const common = { width: 64, height: 64, steps: 8, guidance: 5 };
    const frames = await generateFrames(m, {
      ...common,
      prompt: blue,
      promptEnd: green,
      frames: 3,
      seed: 4,
      seedEnd: 9,
    });
    const first = await generateImage(m, { ...common, prompt: blue, seed: 4 });
    const last = await generateImage(m, { ...common, prompt: green, seed: 9 });
    expect(maxDiff(frames[0]!.data, first.data)).toBeLessThanOrEqual(2);
    expect(maxDiff(frames[2]!.data, last.data)).toBeLessThanOrEqual(2);
    expect(colourShares(frames[0]!.data).blue).toBeGreaterThan(0.3);
    expect(colourShares(frames[2]!.data).green).toBeGreaterThan(0.3);
    expect(maxDiff(frames[1]!.data, frames[0]!.data)).toBeGreaterThan(30); // the middle frame is neither end
    expect(maxDiff(frames[1]!.data, frames[2]!.data)).toBeGreaterThan(30);
  });
});

describe('text-to-video handler', () => {
  it('mp4: H.264 yuv420p with frames x fps as asked, per-frame progress, and the same input gives the same clip', async () => {
    const input = {
      prompt: blue,
      prompt_end: green,
      frames: 4,
      fps: 4,
      width: 64,
      height: 48,
      num_inference_steps: 2,
      seed: 1,
    };
    const { output, bytes, progress } = await clip(input);
    expect(output).toMatchObject({ format: 'mp4', width: 64, height: 48, frames: 4, fps: 4, duration: 1 });
    expect(output.video_url).toMatch(/\.mp4$/);
    const p = probeVideo(bytes);
    expect(p).toMatchObject({ codec: 'h264', pixFmt: 'yuv420p', width: 64, height: 48, fps: 4, frames: 4 });
    expect(p.formatName).toContain('mp4');
    expect(p.duration).toBeCloseTo(1, 2);
    expect(progress.map((x) => x.frame ?? x.stage)).toEqual([1, 2, 3, 4, 'encode']);
    expect(mp4Frames(bytes, 64, 48)).toHaveLength(4);
    const again = await clip(input);
    expect(Buffer.compare(again.bytes, bytes)).toBe(0);
  });

  it('webp: an animated, looping WebP whose frame delays add up to frames / fps', async () => {
    const { output, bytes } = await clip({
      prompt: blue,
      frames: 5,
      fps: 3,
      num_inference_steps: 2,
      seed: 2,
      output_format: 'webp',
    });
    expect(output).toMatchObject({ format: 'webp', width: 64, height: 64, frames: 5, fps: 3, duration: 1.667 });
    const w = await webpFrames(bytes);
    expect([w.frames.length, w.width, w.height, w.loop]).toEqual([5, 64, 64, 0]);
    expect(w.delay.reduce((a, b) => a + b, 0)).toBe(1667);
    // Without prompt_end the noise moves from seed to seed + 1: frames differ.
    expect(maxDiff(w.frames[0]!, w.frames[4]!)).toBeGreaterThan(30);
  });

  it('cancelling stops between frames', async () => {
    const controller = new AbortController();
    // Cancel as soon as the first frame is reported.
    const cancelling = (job: Job<unknown>) =>
      handler({
        ...job,
        input: job.input,
        signal: job.signal,
        log: job.log,
        progress: (v: unknown) => (job.progress(v), controller.abort()),
      } as Job<unknown>);
    const r = await runJob(
      cancelling,
      { prompt: blue, frames: 40, num_inference_steps: 10, seed: 1 },
      { signal: controller.signal },
    );
    expect(r.status).toBe('CANCELLED');
    expect(r.progress).toEqual([{ stage: 'frame', frame: 1, frames: 40, percent: 2 }]);
  });

  it.each([
    [{}, /^invalid_input: prompt: must be a string \(got nothing\)$/],
    [{ prompt: blue, frames: 1 }, /^invalid_input: frames: must be at least 2 \(got 1\)$/],
    [{ prompt: blue, frames: 121 }, /frames: must be at most 120 \(got 121\)/],
    [{ prompt: blue, fps: 0 }, /fps: must be at least 1 \(got 0\)/],
    [{ prompt: blue, prompt_end: '' }, /prompt_end: must not be empty/],
    [{ prompt: blue, width: 66 }, /width: must be a multiple of 4, the model's VAE scale factor \(got 66\)/],
    [{ prompt: blue, height: 1024 }, /height: must be from 32 to 128 for this model \(got 1024\)/],
    [{ prompt: blue, seed_end: -1 }, /seed_end: must be at least 0/],
    [{ prompt: blue, output_format: 'gif' }, /output_format: must be one of mp4, webp \(got "gif"\)/],
    [{ prompt: blue, duration: 3 }, /unknown field "duration"/],
  ])('bad input %j fails the job with a clear invalid_input error', async (input, message) => {
    const r = await runJob(handler, input as never);
    expect(r.status).toBe('FAILED');
    expect(r.error).toMatch(message);
  });
});
