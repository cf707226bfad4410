import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBerthDev } from './harness.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-big-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Issue #35 end to end: `berth dev` on SQLite (blob files in the data folder) with the real worker runtime of
 * examples/basic, which fetches a big input by reference and uploads its big output.
 */
describe('big payloads through berth dev and a real worker process', () => {
  it('a 6 MB /runsync input and its echo come back byte-exact, both kept as blob files', async () => {
    const dataDir = join(dir, 'data');
    await using berth = await startBerthDev({ args: ['--data-dir', dataDir], waitForWorkers: ['echo'] });
    const input = JSON.stringify({ image: Buffer.alloc(4.5 * 1024 * 1024, 'berth').toString('base64'), n: 6 });
    const res = await berth.fetch('/v2/echo/runsync?wait=60000', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"input":${input}}`,
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const job = JSON.parse(text) as { id: string; status: string };
    expect(job.status).toBe('COMPLETED');
    expect(text).toContain(`"output":${input}`);
    const files = readdirSync(join(dataDir, 'blobs')).filter((f) => f.startsWith(`${job.id}~`));
    expect(files.map((f) => f.slice(f.lastIndexOf('.'))).sort()).toEqual(['.in', '.out']);
    // A small job on the same worker right after it is as usual.
    const small = await berth.post('/v2/echo/runsync', { input: { ok: 1 } });
    expect(small.body).toMatchObject({ status: 'COMPLETED', output: { ok: 1 } });
  }, 90_000);
});
