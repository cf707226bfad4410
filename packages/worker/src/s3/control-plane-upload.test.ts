import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { attachOutputTarget } from '../internal/execute/output-target.js';
import { uploadOutput, UploadError } from './index.js';

/** A loopback HTTP server standing in for the control plane's upload route; records what it got. */
async function fakeControlPlane(answer: (req: IncomingMessage, body: Buffer) => { status: number; json: unknown }) {
  const got: {
    method: string | undefined;
    url: string | undefined;
    auth: string | undefined;
    type: string | undefined;
    body: Buffer;
  }[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req
      .on('data', (c: Buffer) => parts.push(c))
      .on('end', () => {
        const body = Buffer.concat(parts);
        got.push({
          method: req.method,
          url: req.url,
          auth: req.headers.authorization,
          type: req.headers['content-type'],
          body,
        });
        const a = answer(req, body);
        res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.json));
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, got, [Symbol.asyncDispose]: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('uploadOutput to the control plane (no S3)', () => {
  it('PUTs the bytes to /v2/_worker/files/<jobId>?ext= with the worker token and returns the signed URL it answers', async () => {
    await using cp = await fakeControlPlane(() => ({
      status: 200,
      json: { url: 'http://cp/files/ab.png?expires=1&sig=x', expiresAt: '2026-01-08T00:00:00.000Z' },
    }));
    const job = { id: 'sync-1-u1' };
    attachOutputTarget(job, { baseUrl: cp.url, token: 'wtok' });
    const out = await uploadOutput(
      job,
      new Uint8Array([5, 6, 7]),
      { contentType: 'image/webp', extension: 'webp' },
      {},
    );
    expect(out).toEqual({ url: 'http://cp/files/ab.png?expires=1&sig=x', expiresAt: '2026-01-08T00:00:00.000Z' });
    expect(cp.got).toHaveLength(1);
    expect(cp.got[0]).toMatchObject({
      method: 'PUT',
      url: '/v2/_worker/files/sync-1-u1?ext=webp',
      auth: 'Bearer wtok',
      type: 'image/webp',
    });
    expect([...cp.got[0]!.body]).toEqual([5, 6, 7]);
  });

  it('without a target on the job, BERTH_URL and BERTH_WORKER_TOKEN name the control plane', async () => {
    await using cp = await fakeControlPlane(() => ({ status: 200, json: { url: 'u', expiresAt: 'e' } }));
    await uploadOutput(
      { id: 'j' },
      new Uint8Array(1),
      { contentType: 'image/png', extension: 'png' },
      { BERTH_URL: cp.url, BERTH_WORKER_TOKEN: 't2' },
    );
    expect(cp.got[0]).toMatchObject({ url: '/v2/_worker/files/j?ext=png', auth: 'Bearer t2' });
  });

  it('a refusal becomes UploadError control_plane_upload_failed carrying the status, message and code', async () => {
    await using cp = await fakeControlPlane(() => ({
      status: 413,
      json: { error: 'request body exceeds the limit of 10 bytes', code: 'payload_too_large' },
    }));
    const job = { id: 'j' };
    attachOutputTarget(job, { baseUrl: cp.url, token: 't' });
    const err = await uploadOutput(job, new Uint8Array(11), { contentType: 'image/png', extension: 'png' }, {}).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UploadError);
    expect((err as UploadError).code).toBe('control_plane_upload_failed');
    expect((err as UploadError).message).toBe(
      'the control plane refused the upload: HTTP 413: request body exceeds the limit of 10 bytes (payload_too_large)',
    );
  });

  it('an unreachable control plane is control_plane_upload_failed naming the address', async () => {
    const job = { id: 'j' };
    attachOutputTarget(job, { baseUrl: 'http://127.0.0.1:1', token: 't' });
    const err = await uploadOutput(job, new Uint8Array(1), { contentType: 'image/png', extension: 'png' }, {}).catch(
      (e: unknown) => e,
    );
    expect((err as UploadError).code).toBe('control_plane_upload_failed');
    expect((err as UploadError).message).toContain('http://127.0.0.1:1');
  });

  it('S3 settings win over the control plane', async () => {
    await using cp = await fakeControlPlane(() => ({ status: 200, json: { url: 'u', expiresAt: 'e' } }));
    const job = {
      id: 'j',
      s3Config: { accessId: 'a', accessSecret: 'b', bucketName: 'x', endpointUrl: 'http://127.0.0.1:1' },
    };
    attachOutputTarget(job, { baseUrl: cp.url, token: 't' });
    const err = await uploadOutput(job, new Uint8Array(1), { contentType: 'image/png', extension: 'png' }, {}).catch(
      (e: unknown) => e,
    );
    expect((err as UploadError).code).toBe('s3_upload_failed');
    expect(cp.got).toHaveLength(0);
  });
});
