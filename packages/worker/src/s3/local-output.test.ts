import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { attachOutputTarget, httpBaseOf, outputTargetOf } from '../internal/execute/output-target.js';
import { uploadOutput, UploadError } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-out-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('uploadOutput without S3 or control plane (local --test-input mode)', () => {
  it('writes <BERTH_OUTPUT_DIR>/<jobId>/<random>.<ext> and returns its file:// URL', async () => {
    const data = new Uint8Array([1, 2, 3, 250]);
    const out = await uploadOutput(
      { id: 'local-test' },
      data,
      { contentType: 'image/jpeg', extension: 'JPG' },
      { BERTH_OUTPUT_DIR: dir },
    );
    expect(out.url).toMatch(/^file:\/\/.*\/local-test\/[0-9a-f]{24}\.jpg$/);
    expect([...readFileSync(fileURLToPath(out.url))]).toEqual([1, 2, 3, 250]);
  });

  it('refuses bad arguments with invalid_upload', async () => {
    const bad = [
      () =>
        uploadOutput(
          { id: 'x' },
          'text' as never,
          { contentType: 'image/png', extension: 'png' },
          { BERTH_OUTPUT_DIR: dir },
        ),
      () =>
        uploadOutput(
          { id: 'x' },
          new Uint8Array(1),
          { contentType: 'image/png', extension: '../x' },
          { BERTH_OUTPUT_DIR: dir },
        ),
      () =>
        uploadOutput(
          { id: 'x' },
          new Uint8Array(1),
          { contentType: 'png', extension: 'png' },
          { BERTH_OUTPUT_DIR: dir },
        ),
    ];
    for (const call of bad) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UploadError);
      expect((err as UploadError).code).toBe('invalid_upload');
    }
  });

  it('a job id cannot escape the output folder', async () => {
    const out = await uploadOutput(
      { id: '../../etc' },
      new Uint8Array(1),
      { contentType: 'image/png', extension: 'png' },
      { BERTH_OUTPUT_DIR: dir },
    );
    expect(fileURLToPath(out.url).startsWith(dir)).toBe(true);
  });
});

describe('output target', () => {
  it('is carried by the job without showing up in JSON or spreads', () => {
    const job = { id: 'j' };
    attachOutputTarget(job, { baseUrl: 'http://h:1', token: 'secret' });
    expect(outputTargetOf(job)).toEqual({ baseUrl: 'http://h:1', token: 'secret' });
    expect(JSON.stringify(job)).not.toContain('secret');
    expect(outputTargetOf({ ...job })).toBeUndefined();
  });
  it('httpBaseOf turns the worker socket URL back into the HTTP base', () => {
    expect(httpBaseOf('ws://127.0.0.1:8080/v2/_worker/ws')).toBe('http://127.0.0.1:8080');
    expect(httpBaseOf('wss://b.example.com/x/v2/_worker/ws')).toBe('https://b.example.com/x');
  });
});
