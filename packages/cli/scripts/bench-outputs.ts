// Figures for public model routes and output storage (prints numbers; not a timed test):
//   1. /runsync round trips per second on a model slug (input check + defaults + cost) versus the same endpoint
//      by its id (baseline), same server, same scripted worker, rounds interleaved; ratio slug/endpoint;
//   2. output file storage, 1 MB: control-plane upload (PUT /v2/_worker/files) + signed download, versus
//      uploadOutput to a real S3-compatible server (s3rver) + presigned download; median ms per file;
//   3. with --images N: the real `berth dev` on examples/image-worker (tiny-sd from BERTH_MODELS_DIR): median
//      wall time of POST /v2/shapes-diffusion/runsync (64x64, 20 steps, PNG, stored by the control plane) and of
//      the same input on /v2/image/runsync (endpoint id, baseline), interleaved; ratio.
//
// Run after `npm run build` at the repository root:
//   node --import tsx packages/cli/scripts/bench-outputs.ts [--seconds 3] [--clients 8] [--files 30]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '@berth/protocol/log';
import { createServer } from '@berth/server';
import { ScriptedWorker } from '@berth/server/testing';
import { uploadOutput } from '@berth/worker/s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

const API_KEY = 'bench-key';
const WORKER_TOKEN = 'bench-worker-token';
/** Credentials s3rver accepts by default. */
const S3RVER_KEY = 'S3RVER';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '8' },
    files: { type: 'string', default: '30' },
    images: { type: 'string', default: '0' },
  },
});
const seconds = Number(values.seconds);
const clients = Number(values.clients);
const files = Number(values.files);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const models = {
  'shapes-diffusion': {
    endpoint: 'echo',
    kind: 'image' as const,
    price: { base: 0.0002, perMegapixelStep: 0.0005 },
    limits: { defaultWidth: 64, defaultHeight: 64, minSize: 32, maxSize: 128, sizeMultiple: 4 },
  },
};
// Rate limits off: both routes share the echo endpoint's runsync window.
const server = createServer({
  apiKeys: [API_KEY],
  workerTokens: [WORKER_TOKEN],
  endpoints: ['echo'],
  logger: silentLogger,
  models,
  sweepIntervalMs: 1000,
  rateLimits: { enabled: false },
});
await using s = { ...(await server.listen({ port: 0 })), [Symbol.asyncDispose]: () => server.close({ drainMs: 0 }) };
const worker = await ScriptedWorker.connect(s.url, WORKER_TOKEN, {
  endpointId: 'echo',
  workerId: 'w1',
  concurrency: 64,
});
await worker.next('welcome');
// Completes every assignment at once with an image-like output.
worker.ws.on('message', (data) => {
  const msg = JSON.parse(data.toString()) as { type: string; id: string; attempt: number };
  if (msg.type === 'job.assign')
    worker.send({ type: 'job.complete', id: msg.id, attempt: msg.attempt, output: { image_url: 'http://x/y.png' } });
});
const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
const body = JSON.stringify({
  input: { prompt: 'a big red circle on a blue background', width: 64, height: 64, num_inference_steps: 20 },
});

async function round(path: string): Promise<{ rps: number; p50: number; failures: number }> {
  const lat: number[] = [];
  let failures = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        const res = await fetch(`${s.url}${path}`, { method: 'POST', headers, body });
        const b = (await res.json()) as { status?: string };
        if (b.status === 'COMPLETED') lat.push(performance.now() - t);
        else failures++;
      }
    }),
  );
  return { rps: lat.length / ((performance.now() - t0) / 1000), p50: median(lat), failures };
}

await round('/v2/echo/runsync'); // warm-up
const slug: number[] = [];
const plain: number[] = [];
const slugP50: number[] = [];
const plainP50: number[] = [];
for (let i = 0; i < 3; i++) {
  const a = await round('/v2/echo/runsync');
  const b = await round('/v2/shapes-diffusion/runsync');
  plain.push(a.rps);
  plainP50.push(a.p50);
  slug.push(b.rps);
  slugP50.push(b.p50);
  if (a.failures + b.failures) console.log(`round ${i}: ${a.failures + b.failures} non-COMPLETED answers`);
}
console.log(
  `runsync, endpoint id (baseline): median ${median(plain).toFixed(0)} req/s, p50 ${median(plainP50).toFixed(2)} ms  (${clients} clients, 3 rounds of ${seconds} s)`,
);
console.log(
  `runsync, model slug:             median ${median(slug).toFixed(0)} req/s, p50 ${median(slugP50).toFixed(2)} ms`,
);
console.log(
  `ratio slug / endpoint:           ${(median(slug) / median(plain)).toFixed(3)} (throughput), ${(median(slugP50) / median(plainP50)).toFixed(3)} (p50 latency)`,
);

// 2. Output files, 1 MB each.
const data = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 2654435761) >>> 24);
// One running job to upload for, held by a second worker that never completes it.
const hold = await ScriptedWorker.connect(s.url, WORKER_TOKEN, {
  endpointId: 'echo',
  workerId: 'holder',
  concurrency: 1,
});
worker.ws.removeAllListeners('message');
await worker.close();
const runBody = (await (
  await fetch(`${s.url}/v2/echo/run`, { method: 'POST', headers, body: JSON.stringify({ input: {} }) })
).json()) as { id: string };
await hold.next('welcome');
let jobId = '';
for (;;) {
  const a = await hold.next('job.assign');
  if (a.id === runBody.id) {
    jobId = a.id;
    break;
  }
}
const cp: number[] = [];
for (let i = 0; i < files; i++) {
  const t = performance.now();
  const up = (await (
    await fetch(`${s.url}/v2/_worker/files/${jobId}?ext=png`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'image/png' },
      body: data,
    })
  ).json()) as { url: string };
  const got = new Uint8Array(await (await fetch(up.url)).arrayBuffer());
  if (got.length !== data.length) throw new Error('control plane returned the wrong size');
  cp.push(performance.now() - t);
}
await hold.close();
const s3times: number[] = [];
{
  await using s3 = await startS3rver('bench');
  const job = {
    id: 'bench-job',
    s3Config: { accessId: S3RVER_KEY, accessSecret: S3RVER_KEY, bucketName: 'bench', endpointUrl: s3.endpoint },
  };
  for (let i = 0; i < files; i++) {
    const t = performance.now();
    const up = await uploadOutput(job, data, { contentType: 'image/png', extension: 'png' });
    const got = new Uint8Array(await (await fetch(up.url)).arrayBuffer());
    if (got.length !== data.length) throw new Error('s3rver returned the wrong size');
    s3times.push(performance.now() - t);
  }
}
console.log(
  `1 MB file, control plane upload + signed download: median ${median(cp).toFixed(1)} ms (${(1000 / median(cp)).toFixed(0)} MB/s round trip, ${files} files)`,
);
console.log(
  `1 MB file, s3rver uploadOutput + presigned download: median ${median(s3times).toFixed(1)} ms (${files} files)`,
);
console.log(`ratio control plane / s3rver: ${(median(cp) / median(s3times)).toFixed(3)}`);

/** A real S3-compatible server (s3rver) on 127.0.0.1, a free port, a temp directory, and the given bucket. */
async function startS3rver(bucket: string): Promise<{ endpoint: string; [Symbol.asyncDispose](): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'berth-s3rver-'));
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const addr = (await s3.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    async [Symbol.asyncDispose]() {
      await s3.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

// 3. Whole stack with the real image worker.
const images = Number(values.images);
if (images > 0) {
  const { resolve } = await import('node:path');
  const { REPO_ROOT, startBerthDev } = await import('../../../tests/e2e/harness.test-helpers.js');
  const modelsDir = process.env['BERTH_MODELS_DIR'] ?? resolve(REPO_ROOT, '../shared/models');
  await using dev = await startBerthDev({
    config: join(REPO_ROOT, 'examples/image-worker/berth.config.json'),
    env: { BERTH_MODELS_DIR: modelsDir },
    waitForWorkers: ['image'],
    readyTimeoutMs: 60_000,
  });
  const input = {
    prompt: 'a big red circle on a blue background',
    width: 64,
    height: 64,
    num_inference_steps: 20,
    guidance: 5,
    output_format: 'png',
  };
  const once = async (path: string, seed: number) => {
    const t = performance.now();
    const r = await dev.post(path, { input: { ...input, seed } });
    if (r.body?.status !== 'COMPLETED') throw new Error(`${path}: ${JSON.stringify(r.body)}`);
    return { ms: performance.now() - t, exec: r.body.executionTime as number };
  };
  await once('/v2/shapes-diffusion/runsync', 0); // model load
  const slugMs: number[] = [];
  const slugExec: number[] = [];
  const plainMs: number[] = [];
  for (let i = 1; i <= images; i++) {
    const a = await once('/v2/image/runsync', i);
    const b = await once('/v2/shapes-diffusion/runsync', i);
    plainMs.push(a.ms);
    slugMs.push(b.ms);
    slugExec.push(b.exec);
  }
  console.log(
    `64x64 / 20 steps / png, /v2/image/runsync (baseline):       median ${median(plainMs).toFixed(0)} ms per image (${images} images)`,
  );
  console.log(
    `64x64 / 20 steps / png, /v2/shapes-diffusion/runsync:     median ${median(slugMs).toFixed(0)} ms per image, executionTime median ${median(slugExec)} ms`,
  );
  console.log(`ratio slug / endpoint: ${(median(slugMs) / median(plainMs)).toFixed(3)}`);
}
process.exit(0);
