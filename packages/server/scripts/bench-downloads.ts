// Peak RSS of the control plane while clients download a large output file at once, for this checkout and,
// given, another one (before/after in one run): `node --import tsx packages/server/scripts/bench-downloads.ts
// [other checkout, built] [--mb 50] [--clients 10]` (after `npm run build`). The server runs in a child process
// (its RSS read from /proc), with the disk file store; the file is stored directly, then downloaded over HTTP.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const HERE = resolve(import.meta.dirname, '../../..');

async function serve(root: string, mb: number): Promise<void> {
  const dist = (p: string) => import(join(root, 'packages/server/dist', p));
  const { createServer } = await dist('index.js');
  const { FileStore } = await dist('files/file-store.js');
  const { UrlSigner } = await dist('files/url-signer.js');
  const { silentLogger } = await dist('logger.js');
  const dir = mkdtempSync(join(tmpdir(), 'berth-dl-'));
  const clock = { now: () => Date.now() };
  const files = new FileStore({ dir, ttlMs: 7 * 86_400_000, clock, logger: silentLogger });
  const meta = await files.put('job', 'bin', 'application/octet-stream', Buffer.alloc(mb * 1024 * 1024, 7));
  const expires = Math.floor(meta.expiresAt / 1000);
  const sig = new UrlSigner(await files.secret()).sign(meta.name, expires);
  const server = createServer({
    apiKeys: ['k'],
    workerTokens: ['t'],
    endpoints: ['echo'],
    filesDir: dir,
    logger: silentLogger,
  });
  const { url } = await server.listen({ port: 0, host: '127.0.0.1' });
  (globalThis as { gc?: () => void }).gc?.();
  process.stdout.write(`${JSON.stringify({ url: `${url}/files/${meta.name}?expires=${expires}&sig=${sig}` })}\n`);
  process.on('SIGTERM', () => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

const rssKb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

async function measure(
  root: string,
  mb: number,
  clients: number,
): Promise<{ idleMb: number; peakMb: number; seconds: number }> {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', import.meta.filename, 'serve', root, String(mb)],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: HERE },
  );
  const line = await new Promise<string>((res, rej) => {
    let buf = '';
    child.stdout.on('data', (c: Buffer) => {
      buf += c.toString();
      if (buf.includes('\n')) res(buf.split('\n')[0]!);
    });
    child.once('exit', () => rej(new Error('server exited')));
  });
  const { url } = JSON.parse(line) as { url: string };
  await new Promise((r) => setTimeout(r, 300));
  const idle = rssKb(child.pid!);
  let peak = idle;
  const timer = setInterval(() => (peak = Math.max(peak, rssKb(child.pid!))), 5);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const res = await fetch(url);
      let n = 0;
      for await (const c of res.body!) n += (c as Uint8Array).byteLength;
      if (res.status !== 200 || n !== mb * 1024 * 1024) throw new Error(`download: HTTP ${res.status}, ${n} bytes`);
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rssKb(child.pid!));
  child.kill('SIGTERM');
  return { idleMb: idle / 1024, peakMb: peak / 1024, seconds };
}

if (process.argv[2] === 'serve') await serve(process.argv[3]!, Number(process.argv[4]));
else {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { mb: { type: 'string', default: '50' }, clients: { type: 'string', default: '10' } },
  });
  const mb = Number(values.mb);
  const clients = Number(values.clients);
  const roots: [string, string][] = [
    ['this checkout', HERE],
    ...(positionals[0] ? [[`base (${positionals[0]})`, resolve(positionals[0])] as [string, string]] : []),
  ];
  process.stdout.write(
    `${clients} concurrent downloads of a ${mb} MB output file (disk store); load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}\n`,
  );
  for (const [name, root] of roots) {
    const r = await measure(root, mb, clients);
    process.stdout.write(
      `${name}: RSS idle ${r.idleMb.toFixed(0)} MB, peak ${r.peakMb.toFixed(0)} MB (+${(r.peakMb - r.idleMb).toFixed(0)} MB), ${r.seconds.toFixed(2)} s\n`,
    );
  }
}
