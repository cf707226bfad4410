// Public model endpoints end to end: the real `berth dev` running examples/image-worker (tiny-sd and ESRGAN from
// BERTH_MODELS_DIR), outputs stored by the control plane (signed URLs) or by a real S3-compatible server.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';
import { S3RVER_KEY, startS3rver } from '../../packages/worker/src/s3/s3rver.test-helpers.js';

const MODELS_DIR = process.env['BERTH_MODELS_DIR'] ?? resolve(REPO_ROOT, '../shared/models');
const CONFIG = join(REPO_ROOT, 'examples/image-worker/berth.config.json');
if (!existsSync(join(MODELS_DIR, 'tiny-sd')))
  throw new Error(`test models not found in ${MODELS_DIR}; set BERTH_MODELS_DIR`);

/** The price table of examples/image-worker/berth.config.json. */
const imageCost = (w: number, h: number, steps: number) =>
  Math.round((0.0002 + 0.0005 * ((w * h) / 1e6) * steps) * 1e6) / 1e6;

async function pixels(bytes: Buffer) {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  let red = 0;
  let blue = 0;
  for (let i = 0; i < data.length; i += 3) {
    const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
    if (r > 150 && g < 110 && b < 110) red++;
    if (b > 150 && r < 110 && g < 110) blue++;
  }
  const n = info.width * info.height;
  return { red: red / n, blue: blue / n };
}

let berth: BerthDev;
beforeAll(async () => {
  berth = await startBerthDev({
    config: CONFIG,
    env: { BERTH_MODELS_DIR: MODELS_DIR },
    waitForWorkers: ['image', 'upscale'],
    readyTimeoutMs: 60_000,
  });
}, 90_000);
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
});

const generate = (input: Record<string, unknown>) => berth.post('/v2/shapes-diffusion/runsync', { input });
const download = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  expect(res.status, url).toBe(200);
  return { bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
};

describe('POST /v2/shapes-diffusion/runsync (control-plane storage)', () => {
  it('COMPLETED with image_url, cost and workerId; the URL serves a PNG of the requested size that follows the prompt', async () => {
    const input = {
      prompt: 'a big red circle on a blue background',
      width: 64,
      height: 96,
      num_inference_steps: 20,
      guidance: 5,
      seed: 7,
    };
    const { status, body } = await generate(input);
    expect(status).toBe(200);
    expect(body, berth.tail()).toMatchObject({
      status: 'COMPLETED',
      workerId: expect.any(String),
      output: { image_url: expect.stringMatching(/\/files\/[0-9a-f]{32}\.png\?expires=\d+&sig=/) },
    });
    expect(Object.keys(body.output).sort()).toEqual(['cost', 'image_url']);
    expect(body.output.cost).toBe(imageCost(64, 96, 20));
    const { bytes, type } = await download(body.output.image_url);
    expect(type).toBe('image/png');
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 64, 96]);
    const p = await pixels(bytes);
    expect(p.red).toBeGreaterThan(0.05); // the big red circle
    expect(p.blue).toBeGreaterThan(0.3); // the blue background
    expect(p.blue).toBeGreaterThan(p.red);

    // Same seed, same bytes; another prompt, another image.
    const again = await generate(input);
    expect((await download(again.body.output.image_url)).bytes.equals(bytes)).toBe(true);
    const other = await generate({ ...input, prompt: 'a big yellow square on a green background' });
    const otherBytes = (await download(other.body.output.image_url)).bytes;
    expect(otherBytes.equals(bytes)).toBe(false);
    expect((await pixels(otherBytes)).red).toBeLessThan(0.05);

    // A changed signature or expiry is refused.
    const u = new URL(body.output.image_url);
    u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 60));
    const tampered = await fetch(u);
    expect(tampered.status).toBe(403);
    expect(await tampered.json()).toMatchObject({ code: 'file_signature_invalid' });
  }, 60_000);

  it('defaults (64x64, 20 steps) and output_format webp', async () => {
    const { body } = await generate({
      prompt: 'a small green triangle on a gray background',
      output_format: 'webp',
      seed: 1,
    });
    expect(body.status, JSON.stringify(body)).toBe('COMPLETED');
    expect(body.output.cost).toBe(imageCost(64, 64, 20));
    const { bytes, type } = await download(body.output.image_url);
    expect(type).toBe('image/webp');
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 64, 64]);
  }, 60_000);

  it('a bad input is a FAILED job object naming each bad field, also on /status', async () => {
    const { status, body } = await generate({ prompt: 'a red circle', width: 4096, num_inference_steps: 'many' });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'FAILED' });
    expect(body.error).toContain('width: must be from 32 to 128 (got 4096)');
    expect(body.error).toContain('num_inference_steps: must be a number (got "many")');
    const again = await berth.json(`/v2/shapes-diffusion/status/${body.id}`);
    expect(again.body).toMatchObject({ id: body.id, status: 'FAILED', error: body.error });
  });

  it('esrgan-upscale: 2x of a base64 PNG, cost from the scale', async () => {
    const src = await sharp({ create: { width: 40, height: 24, channels: 3, background: { r: 200, g: 30, b: 30 } } })
      .png()
      .toBuffer();
    const { body } = await berth.post('/v2/esrgan-upscale/runsync', {
      input: { image: `data:image/png;base64,${src.toString('base64')}`, scale: 2 },
    });
    expect(body.status, JSON.stringify(body)).toBe('COMPLETED');
    expect(body.output.cost).toBe(0.0007);
    const meta = await sharp((await download(body.output.image_url)).bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 80, 48]);
  }, 60_000);

  it('s3Config in the request body: the worker uploads to that bucket (never echoed back)', async () => {
    await using s3 = await startS3rver('client-bucket');
    // s3rver checks the access key id, not SigV4 signatures: any secret works, and must never come back.
    const s3Config = {
      accessId: S3RVER_KEY,
      accessSecret: 'client-secret-9f3a',
      bucketName: 'client-bucket',
      endpointUrl: s3.endpoint,
      objectPath: 'renders',
    };
    const { body } = await berth.post('/v2/shapes-diffusion/runsync', {
      input: { prompt: 'a big red circle on a blue background', seed: 5 },
      s3Config,
    });
    expect(body.status, JSON.stringify(body)).toBe('COMPLETED');
    expect(JSON.stringify(body)).not.toContain('client-secret-9f3a');
    expect((await berth.json(`/v2/shapes-diffusion/status/${body.id}`)).body.s3Config).toBeUndefined();
    const u = new URL(body.output.image_url);
    expect(u.pathname).toMatch(new RegExp(`^/client-bucket/renders/${body.id}/[0-9a-f]{24}\\.png$`));
    const meta = await sharp((await download(body.output.image_url)).bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 64, 64]);
  }, 60_000);
});

describe('S3 output storage from the worker environment (s3rver)', () => {
  it('BUCKET_* set for berth dev: image_url is a presigned URL of the bucket that serves the image', async () => {
    await using s3 = await startS3rver('berth-outputs');
    await using dev = await startBerthDev({
      config: CONFIG,
      env: {
        BERTH_MODELS_DIR: MODELS_DIR,
        BUCKET_ENDPOINT_URL: `${s3.endpoint}/berth-outputs`,
        BUCKET_ACCESS_KEY_ID: S3RVER_KEY,
        BUCKET_SECRET_ACCESS_KEY: S3RVER_KEY,
      },
      waitForWorkers: ['image'],
      readyTimeoutMs: 60_000,
    });
    const { body } = await dev.post('/v2/shapes-diffusion/runsync', {
      input: { prompt: 'a big red circle on a blue background', seed: 3, output_format: 'jpeg' },
    });
    expect(body.status, dev.tail()).toBe('COMPLETED');
    const u = new URL(body.output.image_url);
    expect(u.origin).toBe(s3.endpoint);
    expect(u.pathname).toMatch(new RegExp(`^/berth-outputs/${body.id}/[0-9a-f]{24}\\.jpeg$`));
    expect(u.searchParams.get('X-Amz-Expires')).toBe('604800');
    const meta = await sharp((await download(body.output.image_url)).bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 64, 64]);
  }, 90_000);
});
