// Public audio and video models end to end: the real `berth dev` running examples/audio-worker (espeak-ng) and the
// text-to-video worker of examples/image-worker (tiny-sd from BERTH_MODELS_DIR), outputs stored by the control
// plane under signed URLs, files checked with the real ffprobe (and sharp for animated WebP).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';
import { S3RVER_KEY, startS3rver } from '../../packages/worker/src/s3/s3rver.test-helpers.js';

const MODELS_DIR = process.env['BERTH_MODELS_DIR'] ?? resolve(REPO_ROOT, '../shared/models');
if (!existsSync(join(MODELS_DIR, 'tiny-sd')))
  throw new Error(`test models not found in ${MODELS_DIR}; set BERTH_MODELS_DIR`);
const AUDIO = join(REPO_ROOT, 'examples/audio-worker');
const IMAGE = join(REPO_ROOT, 'examples/image-worker');
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const audioConfig = readJson(join(AUDIO, 'berth.config.json'));
const imageConfig = readJson(join(IMAGE, 'berth.config.json'));
const ttsPrice = audioConfig.models['espeak-tts'].price as { base: number; perThousandChars: number };
const videoPrice = imageConfig.models['tiny-sd-video'].price as { base: number; perMegapixelStepFrame: number };
const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** ffprobe of a downloaded file: container, first stream and (for video) the decoded frame count. */
function probe(bytes: Buffer): { format: string; duration: number; stream: Record<string, string | number> } {
  const dir = mkdtempSync(join(tmpdir(), 'berth-e2e-probe-'));
  try {
    const file = join(dir, 'media');
    writeFileSync(file, bytes);
    const args = [
      '-v',
      'error',
      '-count_frames',
      '-show_entries',
      'format=format_name,duration:stream=codec_name,pix_fmt,width,height,r_frame_rate,nb_read_frames,sample_rate,channels',
      '-of',
      'json',
      file,
    ];
    const j = JSON.parse(execFileSync('ffprobe', args, { encoding: 'utf8' }));
    return { format: j.format.format_name, duration: Number(j.format.duration), stream: j.streams[0] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// One `berth dev` serving both slugs: a config in a temp folder naming the two example workers and copying
// their model entries (prices, limits) from the examples' own berth.config.json files.
let dir: string;
let berth: BerthDev;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'berth-e2e-av-'));
  const config = {
    endpoints: {
      tts: { worker: join(AUDIO, 'tts.ts'), workers: 1 },
      video: { worker: join(IMAGE, 'text-to-video.ts'), workers: 1 },
    },
    models: { 'espeak-tts': audioConfig.models['espeak-tts'], 'tiny-sd-video': imageConfig.models['tiny-sd-video'] },
  };
  writeFileSync(join(dir, 'berth.config.json'), JSON.stringify(config));
  berth = await startBerthDev({
    config: join(dir, 'berth.config.json'),
    env: { BERTH_MODELS_DIR: MODELS_DIR },
    waitForWorkers: ['tts', 'video'],
    readyTimeoutMs: 60_000,
  });
}, 90_000);
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

const download = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  expect(res.status, url).toBe(200);
  return { bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
};

describe('POST /v2/espeak-tts/runsync', () => {
  const text = 'Berth speaks. The quick brown fox jumps over the lazy dog.';
  it.each([
    ['wav', 'audio/wav', 'wav', 'pcm_s16le', 0.01],
    ['mp3', 'audio/mpeg', 'mp3', 'mp3', 0.15],
    ['ogg', 'audio/ogg', 'ogg', 'vorbis', 0.15],
  ])(
    '%s: COMPLETED with audio_url, format, duration and cost; the file decodes to that duration',
    async (format, type, container, codec, tolerance) => {
      const { status, body } = await berth.post('/v2/espeak-tts/runsync', {
        input: { text, voice: 'en-us', output_format: format },
      });
      expect(status).toBe(200);
      expect(body, berth.tail()).toMatchObject({
        status: 'COMPLETED',
        workerId: expect.any(String),
        output: { format },
      });
      expect(Object.keys(body.output).sort()).toEqual(['audio_url', 'cost', 'duration', 'format']);
      expect(body.output.audio_url).toMatch(new RegExp(`/files/[0-9a-f]{32}\\.${format}\\?expires=\\d+&sig=`));
      expect(body.output.cost).toBe(round(ttsPrice.base + (ttsPrice.perThousandChars * text.length) / 1000));
      const file = await download(body.output.audio_url);
      expect(file.type).toBe(type);
      const p = probe(file.bytes);
      expect([p.format, p.stream['codec_name'], Number(p.stream['sample_rate']), p.stream['channels']]).toEqual([
        container,
        codec,
        22050,
        1,
      ]);
      expect(body.output.duration).toBeGreaterThan(2.5); // 11 words at 175 words per minute
      expect(Math.abs(p.duration - body.output.duration)).toBeLessThan(tolerance);
    },
    30_000,
  );

  it('s3Config in the request: the worker uploads the MP3 to that bucket; the presigned URL serves it', async () => {
    await using s3 = await startS3rver('speech');
    const s3Config = {
      accessId: S3RVER_KEY,
      accessSecret: 'speech-secret-51c',
      bucketName: 'speech',
      endpointUrl: s3.endpoint,
      objectPath: 'tts',
    };
    const { body } = await berth.post('/v2/espeak-tts/runsync', {
      input: { text: 'Stored in a bucket.', output_format: 'mp3' },
      s3Config,
    });
    expect(body.status, JSON.stringify(body)).toBe('COMPLETED');
    expect(JSON.stringify(body)).not.toContain('speech-secret-51c');
    const u = new URL(body.output.audio_url);
    expect([u.origin, u.searchParams.get('X-Amz-Expires')]).toEqual([s3.endpoint, '604800']);
    expect(u.pathname).toMatch(new RegExp(`^/speech/tts/${body.id}/[0-9a-f]{24}\\.mp3$`));
    const p = probe((await download(body.output.audio_url)).bytes);
    expect([p.format, p.stream['codec_name']]).toEqual(['mp3', 'mp3']);
    expect(Math.abs(p.duration - body.output.duration)).toBeLessThan(0.15);
  }, 30_000);

  it('bad inputs are FAILED jobs: refused by the control plane (text, speed, pitch) or by the worker (unknown voice)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ text: '' }, 'invalid_input: text: must not be empty'],
      [{ text: 'x'.repeat(1001) }, 'invalid_input: text: must be at most 1000 characters (got 1001)'],
      [
        { text: 'hi', speed: 3, pitch: -1 },
        'invalid_input: speed: must be from 0.5 to 2 (got 3); pitch: must be from 0 to 99 (got -1)',
      ],
      [
        { text: 'hi', output_format: 'flac' },
        'invalid_input: output_format: must be one of "wav", "mp3", "ogg" (got "flac")',
      ],
    ];
    for (const [input, error] of cases) {
      const { body } = await berth.post('/v2/espeak-tts/runsync', { input });
      expect(body).toEqual({ id: body.id, status: 'FAILED', error });
    }
    const { body } = await berth.post('/v2/espeak-tts/runsync', { input: { text: 'hi', voice: 'klingon' } });
    expect(body).toMatchObject({ status: 'FAILED', workerId: expect.any(String) });
    expect(body.error).toMatch(/^invalid_input: voice: unknown voice "klingon" \(espeak-ng languages include "en-us"/);
  }, 30_000);
});

describe('POST /v2/tiny-sd-video/runsync', () => {
  const prompt = 'a big red circle on a blue background';
  const cost = (w: number, h: number, steps: number, frames: number) =>
    round(videoPrice.base + videoPrice.perMegapixelStepFrame * ((w * h) / 1e6) * steps * frames);

  it('mp4: COMPLETED with video_url; ffprobe finds H.264 yuv420p, the asked frame count, fps and duration', async () => {
    const input = {
      prompt,
      prompt_end: 'a big red circle on a green background',
      frames: 6,
      fps: 4,
      width: 64,
      height: 48,
      num_inference_steps: 2,
      seed: 3,
    };
    const { body } = await berth.post('/v2/tiny-sd-video/runsync', { input });
    expect(body, berth.tail()).toMatchObject({
      status: 'COMPLETED',
      output: { format: 'mp4', width: 64, height: 48, frames: 6, fps: 4, duration: 1.5 },
    });
    expect(Object.keys(body.output).sort()).toEqual([
      'cost',
      'duration',
      'format',
      'fps',
      'frames',
      'height',
      'video_url',
      'width',
    ]);
    expect(body.output.video_url).toMatch(/\/files\/[0-9a-f]{32}\.mp4\?expires=\d+&sig=/);
    expect(body.output.cost).toBe(cost(64, 48, 2, 6));
    const file = await download(body.output.video_url);
    expect(file.type).toBe('video/mp4');
    const p = probe(file.bytes);
    expect(p.format).toContain('mp4');
    expect(p.stream).toMatchObject({
      codec_name: 'h264',
      pix_fmt: 'yuv420p',
      width: 64,
      height: 48,
      r_frame_rate: '4/1',
      nb_read_frames: '6',
    });
    expect(p.duration).toBeCloseTo(1.5, 2);
  }, 60_000);

  it('webp: an animated WebP with one page per frame and delays adding up to the duration (defaults: 64x64)', async () => {
    const { body } = await berth.post('/v2/tiny-sd-video/runsync', {
      input: { prompt, frames: 5, fps: 10, num_inference_steps: 2, seed: 1, output_format: 'webp' },
    });
    expect(body, berth.tail()).toMatchObject({
      status: 'COMPLETED',
      output: { format: 'webp', width: 64, height: 64, frames: 5, fps: 10, duration: 0.5 },
    });
    expect(body.output.cost).toBe(cost(64, 64, 2, 5));
    const file = await download(body.output.video_url);
    expect(file.type).toBe('image/webp');
    const meta = await sharp(file.bytes, { animated: true }).metadata();
    expect([meta.format, meta.pages, meta.pageHeight, meta.width, meta.loop]).toEqual(['webp', 5, 64, 64, 0]);
    expect(meta.delay?.reduce((a, b) => a + b, 0)).toBe(500);
  }, 60_000);

  it('progress is reported per frame while the clip renders (/run, then /status)', async () => {
    const { body } = await berth.post('/v2/tiny-sd-video/run', {
      input: { prompt, frames: 16, num_inference_steps: 6, seed: 2 },
    });
    const seen = new Set<number>();
    let job = body;
    for (let i = 0; i < 600 && job.status !== 'COMPLETED' && job.status !== 'FAILED'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      job = (await berth.json(`/v2/tiny-sd-video/status/${body.id}`)).body;
      if (job.status === 'IN_PROGRESS' && job.progress?.stage === 'frame') {
        expect(job.progress).toMatchObject({ frames: 16, frame: expect.any(Number), percent: expect.any(Number) });
        seen.add(job.progress.frame);
      }
    }
    expect(job.status, JSON.stringify(job)).toBe('COMPLETED');
    expect(job.output.frames).toBe(16);
    expect(
      [...seen].some((f) => f < 16),
      `frames seen: ${[...seen]}`,
    ).toBe(true);
  }, 60_000);

  it('bad inputs are FAILED jobs naming each field', async () => {
    const { body } = await berth.post('/v2/tiny-sd-video/runsync', {
      input: { prompt, frames: 100, fps: 0, width: 66, output_format: 'gif' },
    });
    expect(body).toEqual({
      id: body.id,
      status: 'FAILED',
      error:
        'invalid_input: frames: must be from 2 to 48 (got 100); fps: must be from 1 to 30 (got 0); width: must be a multiple of 4 (got 66); output_format: must be one of "mp4", "webp" (got "gif")',
    });
    const missing = await berth.post('/v2/tiny-sd-video/runsync', { input: { frames: 4 } });
    expect(missing.body).toMatchObject({ status: 'FAILED', error: 'invalid_input: prompt: is required' });
  });
});
