import { describe, expect, it } from 'vitest';
import { ScriptedWorker, call, listening } from '../testing.test-helpers.js';
import { checkInput } from './input.js';
import { costOf } from './pricing.js';
import { resolveModels } from './registry.js';
import type { ModelConfig } from './types.js';

const MODELS: Record<string, ModelConfig> = {
  'espeak-tts': {
    endpoint: 'tts',
    kind: 'audio',
    price: { base: 0.0001, perThousandChars: 0.002 },
    limits: { maxTextChars: 200 },
  },
  'tiny-sd-video': {
    endpoint: 'video',
    kind: 'video',
    price: { base: 0.0005, perMegapixelStepFrame: 0.0005 },
    limits: {
      defaultWidth: 64,
      defaultHeight: 64,
      minSize: 32,
      maxSize: 128,
      sizeMultiple: 4,
      defaultSteps: 10,
      defaultFrames: 6,
      maxFrames: 24,
      defaultFps: 6,
      maxFps: 24,
    },
  },
};
const models = resolveModels(MODELS);
const audio = models.get('espeak-tts')!;
const video = models.get('tiny-sd-video')!;
const round = (x: number) => Math.round(x * 1e6) / 1e6;

describe('audio and video cost formulas', () => {
  it('audio: base + perThousandChars x characters / 1000', () => {
    expect(costOf(audio, { text: 'x'.repeat(500) })).toBe(round(0.0001 + 0.002 * 0.5));
    expect(costOf(audio, { text: 'hello' })).toBe(round(0.0001 + 0.002 * 0.005));
  });
  it('video: base + perMegapixelStepFrame x megapixels x steps x frames', () => {
    expect(costOf(video, { width: 64, height: 64, num_inference_steps: 2, frames: 4 })).toBe(
      round(0.0005 + 0.0005 * 0.004096 * 2 * 4),
    );
    // Doubling the frames doubles the variable part.
    const a = costOf(video, { width: 128, height: 128, num_inference_steps: 20, frames: 12 }) - 0.0005;
    const b = costOf(video, { width: 128, height: 128, num_inference_steps: 20, frames: 24 }) - 0.0005;
    expect(b / a).toBeCloseTo(2, 4);
    // Defaults from the limits when the input lacks a field.
    expect(costOf(video, {})).toBe(round(0.0005 + 0.0005 * 0.004096 * 10 * 6));
  });
});

describe('audio and video input validation', () => {
  it('fills in defaults', () => {
    expect(checkInput(audio, { text: 'Hello' })).toEqual({
      ok: true,
      input: { text: 'Hello', speed: 1, pitch: 50, output_format: 'wav' },
    });
    expect(checkInput(video, { prompt: 'a big red circle on a blue background' })).toEqual({
      ok: true,
      input: {
        prompt: 'a big red circle on a blue background',
        frames: 6,
        fps: 6,
        width: 64,
        height: 64,
        num_inference_steps: 10,
        guidance: 5,
        output_format: 'mp4',
      },
    });
  });
  it('audio: names every bad field (empty or oversized text, voice, speed, pitch, format, unknown)', () => {
    expect(
      checkInput(audio, { text: '', voice: 'en us', speed: 3, pitch: 100, output_format: 'flac', rate: 1 }),
    ).toEqual({
      ok: false,
      problems: [
        'unknown field "rate" (known: text, voice, speed, pitch, output_format)',
        'text: must not be empty',
        'voice: must be a voice name like "en-us" or "en-us+f3" (got "en us")',
        'speed: must be from 0.5 to 2 (got 3)',
        'pitch: must be from 0 to 99 (got 100)',
        'output_format: must be one of "wav", "mp3", "ogg" (got "flac")',
      ],
    });
    expect(checkInput(audio, { text: 'y'.repeat(201) })).toEqual({
      ok: false,
      problems: ['text: must be at most 200 characters (got 201)'],
    });
    expect(checkInput(audio, {})).toEqual({ ok: false, problems: ['text: is required'] });
  });
  it('video: frames, fps, sizes, seeds and format', () => {
    expect(
      checkInput(video, {
        prompt: 'p',
        prompt_end: '',
        frames: 1,
        fps: 25,
        width: 66,
        seed_end: -1,
        output_format: 'gif',
      }),
    ).toEqual({
      ok: false,
      problems: [
        'prompt_end: must not be empty',
        'frames: must be from 2 to 24 (got 1)',
        'fps: must be from 1 to 24 (got 25)',
        'width: must be a multiple of 4 (got 66)',
        'seed_end: must be from 0 to 9007199254740991 (got -1)',
        'output_format: must be one of "mp4", "webp" (got "gif")',
      ],
    });
  });
  it('registry: new price fields and limits are checked', () => {
    expect(() => resolveModels({ m: { endpoint: 'e', kind: 'audio', price: { perThousandChars: -1 } } })).toThrow(
      /models\.m\.price\.perThousandChars must be a non-negative number/,
    );
    expect(() => resolveModels({ m: { endpoint: 'e', kind: 'video', limits: { defaultFrames: 60 } } })).toThrow(
      /defaultFrames must be from 2 to maxFrames/,
    );
    expect(() => resolveModels({ m: { endpoint: 'e', kind: 'video', limits: { maxFps: 0 } } })).toThrow(
      /defaultFps must be from 1 to maxFps/,
    );
    expect(() => resolveModels({ m: { endpoint: 'e', kind: 'audio', price: { perSecond: 1 } } as never })).toThrow(
      /unknown field "perSecond" \(known: base, perMegapixelStep, perUpscale, perThousandChars, perMegapixelStepFrame\)/,
    );
  });
});

describe('audio and video slugs (real server, scripted worker)', () => {
  it('runsync answers audio_url / video_url with the cost; a bad input is a FAILED job never sent to a worker', async () => {
    await using s = await listening({ endpoints: ['tts', 'video'], models: MODELS });
    const tts = await ScriptedWorker.connect(s.url, { endpointId: 'tts', workerId: 'tts-1' });
    const vid = await ScriptedWorker.connect(s.url, { endpointId: 'video', workerId: 'video-1' });
    const bad = await call(s.server, 'POST', '/v2/espeak-tts/runsync', { body: { input: { text: 'hi', speed: 0.1 } } });
    expect(bad.body).toMatchObject({
      status: 'FAILED',
      error: 'invalid_input: speed: must be from 0.5 to 2 (got 0.1)',
    });

    const a = call(s.server, 'POST', '/v2/espeak-tts/runsync', {
      body: { input: { text: 'Hello there', voice: 'en-us' } },
    });
    const aj = await tts.next('job.assign');
    expect(aj.input).toEqual({ text: 'Hello there', voice: 'en-us', speed: 1, pitch: 50, output_format: 'wav' });
    tts.send({
      type: 'job.complete',
      id: aj.id,
      attempt: aj.attempt,
      output: { audio_url: 'http://files/a.wav', format: 'wav', duration: 0.9 },
    });
    expect((await a).body).toMatchObject({
      status: 'COMPLETED',
      workerId: 'tts-1',
      output: { audio_url: 'http://files/a.wav', cost: costOf(audio, aj.input) },
    });

    const v = call(s.server, 'POST', '/v2/tiny-sd-video/runsync', {
      body: { input: { prompt: 'p', frames: 4, num_inference_steps: 2 } },
    });
    const vj = await vid.next('job.assign');
    vid.send({ type: 'job.complete', id: vj.id, attempt: vj.attempt, output: { video_url: 'http://files/v.mp4' } });
    expect((await v).body).toMatchObject({
      status: 'COMPLETED',
      output: { video_url: 'http://files/v.mp4', cost: round(0.0005 + 0.0005 * 0.004096 * 2 * 4) },
    });
    expect(tts.count('job.assign')).toBe(1);
    await tts.close();
    await vid.close();
  });
});
