import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runJob } from '@berth/worker/testing';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode } from '../image/colours.test-helpers.js';
import { modelsDir } from '../test-models.test-helpers.js';
import { createUpscaler } from '../upscale/upscaler.js';
import { fetchOutput, psnr, removeDir, useTempOutputDir } from './handlers.test-helpers.js';
import { createUpscaleHandler } from './upscale.js';

const outDir = useTempOutputDir();
const flower = readFileSync(join(modelsDir, 'fixtures/flower-128.png'));
const handler = createUpscaleHandler({
  upscaler: createUpscaler({ 2: join(modelsDir, 'esrgan-x2'), 4: join(modelsDir, 'esrgan-x4') }),
  limits: { maxPixels: 256 * 256 },
});

// A real HTTP server on loopback serving the fixture, a 404 and a non-image.
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/flower.png') res.writeHead(200, { 'content-type': 'image/png' }).end(flower);
    else if (req.url === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end('not an image');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  removeDir(outDir);
});

describe('upscale handler', () => {
  it("x2 of a URL matches the model package's published result (PSNR)", async () => {
    const r = await runJob(handler, { image: `${base}/flower.png`, scale: 2 });
    expect(r.status).toBe('COMPLETED');
    const out = await decode(await fetchOutput((r.output as { image_url: string }).image_url));
    expect([out.format, out.width, out.height]).toEqual(['png', 256, 256]);
    const expected = await decode(readFileSync(join(modelsDir, 'fixtures/flower-256-expected-x2.png')));
    expect(psnr(out.data, expected.data)).toBeGreaterThan(60);
    expect(r.progress).toEqual([{ stage: 'upscale', scale: 2, width: 128, height: 128 }]);
  });

  it('x4 of a data URL and of bare base64; the result is close to a plain resize (same picture)', async () => {
    for (const image of [`data:image/png;base64,${flower.toString('base64')}`, flower.toString('base64')]) {
      const r = await runJob(handler, { image, scale: 4, output_format: 'webp' });
      const out = await decode(await fetchOutput((r.output as { image_url: string }).image_url));
      expect([out.format, out.width, out.height]).toEqual(['webp', 512, 512]);
      const resized = await sharp(flower).removeAlpha().resize(512, 512, { kernel: 'cubic' }).raw().toBuffer();
      expect(psnr(out.data, new Uint8Array(resized))).toBeGreaterThan(22);
    }
  });

  it('scale defaults to 2', async () => {
    const r = await runJob(handler, { image: `${base}/flower.png` });
    expect((await decode(await fetchOutput((r.output as { image_url: string }).image_url))).width).toBe(256);
  });

  it.each([
    [{}, /image: must be an http\(s\) URL or base64 image data \(got nothing\)/],
    [{ image: 'x', scale: 3 }, /scale: must be 2 or 4 \(got 3\)/],
    [{ image: 'ftp://example/x.png' }, /image: image must be an http\(s\) URL, a data: URL or base64 data/],
    [{ image: 'data:image/png,abc' }, /must be base64-encoded/],
    [{ image: Buffer.from('hello world').toString('base64') }, /image could not be decoded/],
  ])('bad input %j fails with a clear message', async (input, message) => {
    const r = await runJob(handler, input as never);
    expect(r.status).toBe('FAILED');
    expect(r.error).toMatch(/^invalid_input: /);
    expect(r.error).toMatch(message);
  });

  it('a URL that answers 404 or is not an image, and an image over the pixel limit, fail clearly', async () => {
    expect((await runJob(handler, { image: `${base}/missing.png` })).error).toMatch(/image URL answered HTTP 404/);
    expect((await runJob(handler, { image: `${base}/text` })).error).toMatch(/image could not be decoded/);
    const big = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#808080' } })
      .png()
      .toBuffer();
    expect((await runJob(handler, { image: big.toString('base64') })).error).toMatch(
      /image is 300x300, larger than the 65536 pixels/,
    );
  });
});
