// Ingests on the pool threads: real files, a real tmpfs for the full disk, the built module in a child process.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkOnPool, startIngest } from './ingest-pool.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-ingest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `body-${n++}.json`);

async function send(path: string, body: Buffer, chunk: number, opts = {}) {
  const ing = startIngest(path, { key: 'input', fsync: true, ...opts });
  for (let i = 0; i < body.length; i += chunk) await ing.write(body.subarray(i, i + chunk));
  return ing.end();
}

describe('startIngest', () => {
  it('writes a 20 MB body to its file while checking it, off the main thread', async () => {
    const input = { image: 'QUJD'.repeat(5 * 1024 * 1024), s: 'é😀' };
    const body = Buffer.from(JSON.stringify({ input, webhook: 'http://h' }));
    const path = file();
    const t0 = performance.now();
    const r = await send(path, body, 64 * 1024);
    console.log(`20 MB ingest (64 KiB writes, fsync): ${(performance.now() - t0).toFixed(0)} ms`);
    const written = readFileSync(path);
    expect(written.equals(body)).toBe(true);
    expect(r).toMatchObject({ size: body.length, keyKind: 'object', fields: { webhook: 'http://h' } });
    expect(r.sha256).toBe(createHash('sha256').update(body).digest('hex'));
    expect(JSON.parse(written.subarray(...r.span!).toString())).toEqual(input);
  });

  it('makes the writer wait while more than 1 MiB is not yet written', async () => {
    const ing = startIngest(file(), { fsync: false });
    let resolved = false;
    const big = ing.write(Buffer.from(`"${'a'.repeat(3 * 1024 * 1024)}`));
    void big.then(() => (resolved = true));
    await Promise.resolve();
    expect(resolved).toBe(false); // 3 MiB in flight: the caller waits for the thread
    await big;
    await ing.write(Buffer.from('"'));
    expect((await ing.end()).size).toBe(3 * 1024 * 1024 + 2);
  });

  it('runs six ingests at once on the two threads, each file and result its own', async () => {
    const bodies = Array.from({ length: 6 }, (_, i) =>
      Buffer.from(JSON.stringify({ input: { i, s: 'x'.repeat(300_000 + i) }, n: i })),
    );
    const paths = bodies.map(() => file());
    const results = await Promise.all(bodies.map((b, i) => send(paths[i]!, b, 7_000 + i * 1_000)));
    results.forEach((r, i) => {
      expect(readFileSync(paths[i]!).equals(bodies[i]!)).toBe(true);
      expect(r.fields).toEqual({ n: i });
    });
  });

  it('copies each chunk: the caller may reuse its buffer as soon as write returns', async () => {
    const path = file();
    const ing = startIngest(path, { fsync: false });
    const buf = Buffer.from('{"input":');
    const pending = ing.write(buf);
    buf.fill(0x20); // reused at once, as an in-process caller yielding one buffer again and again does
    await pending;
    buf.write('[1]}    ');
    await ing.write(buf);
    await ing.end();
    expect(readFileSync(path, 'utf8')).toBe('{"input":[1]}     ');
  });

  it('rejects a bad body with its error and deletes the file; the next write rejects too', async () => {
    const path = file();
    const ing = startIngest(path, { key: 'input', fsync: false });
    await ing.write(Buffer.from('{"input":{"a":1e999},'));
    await ing.write(Buffer.from('"x":1}'));
    await expect(ing.end()).rejects.toMatchObject({ code: 'invalid_request', details: { field: 'input.a' } });
    expect(existsSync(path)).toBe(false);

    const path2 = file();
    const bad = startIngest(path2, { key: 'input', fsync: false, maxOtherBytes: 1024 });
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 8; i++) writes.push(bad.write(Buffer.from(i === 0 ? '{"input":1,"pad":"' : 'x'.repeat(600))));
    const results = await Promise.allSettled(writes);
    await expect(bad.end()).rejects.toMatchObject({ code: 'payload_too_large', details: { field: 'pad' } });
    await expect(bad.write(Buffer.from('x'))).rejects.toMatchObject({ code: 'payload_too_large' });
    expect(results.some((s) => s.status === 'fulfilled')).toBe(true);
    expect(existsSync(path2)).toBe(false);
  });

  it('abort stops the ingest and deletes its file, also after end', async () => {
    const path = file();
    const ing = startIngest(path, { fsync: false });
    await ing.write(Buffer.from('{"input":'));
    await ing.abort();
    expect(existsSync(path)).toBe(false);
    await expect(ing.write(Buffer.from('1'))).rejects.toThrow(/after end\(\) or abort\(\)/);

    const done = file();
    await send(done, Buffer.from('{"input":1}'), 4);
    expect(existsSync(done)).toBe(true);
  });

  it('answers 507 insufficient_storage on a full disk (a 1 MiB tmpfs) and deletes the file', async (ctx) => {
    const mnt = join(dir, 'tiny');
    mkdirSync(mnt);
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt], { encoding: 'utf8' });
    if (mount.status !== 0) ctx.skip(`cannot mount a tmpfs here (needs root): ${mount.stderr.trim()}`);
    try {
      const path = join(mnt, 'big.json');
      const body = Buffer.from(JSON.stringify({ input: 'x'.repeat(3 * 1024 * 1024) }));
      await expect(send(path, body, 256 * 1024)).rejects.toMatchObject({
        code: 'insufficient_storage',
        message: expect.stringContaining('ENOSPC'),
      });
      expect(existsSync(path)).toBe(false);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});

describe('checkOnPool', () => {
  it('checks a whole buffer on a thread: the fields, the span, the error', async () => {
    const r = await checkOnPool(Buffer.from('{"type":"job.complete","output":[1,2]}'), { key: 'output' });
    expect(r).toMatchObject({ keyKind: 'other', span: [32, 37], fields: { type: 'job.complete' } });
    await expect(checkOnPool(Buffer.from('{"output":'), {})).rejects.toMatchObject({ code: 'invalid_json' });
  });
});

describe('the built module', () => {
  const built = new URL('../../dist/blobs/ingest-pool.js', import.meta.url);
  it.skipIf(!existsSync(built))('runs its thread from dist/ (a plain node process, no tsx)', () => {
    const path = file();
    const code = `import { startIngest } from ${JSON.stringify(built.href)};
      const ing = startIngest(${JSON.stringify(path)}, { key: 'input', fsync: false });
      await ing.write(Buffer.from('{"input":{"a":1},"b":2}'));
      console.log(JSON.stringify(await ing.end()));`;
    const script = join(dir, 'built.mjs');
    writeFileSync(script, code);
    const out = execFileSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
    expect(JSON.parse(out)).toMatchObject({ span: [9, 16], keyKind: 'object', fields: { b: 2 }, size: 23 });
    expect(readFileSync(path, 'utf8')).toBe('{"input":{"a":1},"b":2}');
  });
});
