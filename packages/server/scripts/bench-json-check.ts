// The streaming JSON checker's speed (blobs/json-check.ts), in MB/s of CPU time (process.cpuUsage, so other work
// on the machine counts less than in wall time), against JSON.parse of the same bytes as a reference.
// Run: node --import tsx packages/server/scripts/bench-json-check.ts
import { JsonChecker } from '../src/blobs/json-check.js';

const MB = 1e6;
const bodies: [string, Buffer][] = [
  ['19 MB base64 string in input', Buffer.from(JSON.stringify({ input: { image: 'QUJD'.repeat((19 * MB) / 4) } }))],
  [
    '19 MB of small objects in input',
    Buffer.from(
      JSON.stringify({
        input: Array.from({ length: 380_000 }, (_, i) => ({ id: i, name: `item ${i}`, score: i * 1.5, ok: true })),
      }),
    ),
  ],
  ['19 MB of padding outside input (refused)', Buffer.from(`{"input":{},"pad":[${'{},'.repeat((19 * MB) / 3)}{}]}`)],
];

function cpuMs(f: () => void): number {
  const before = process.cpuUsage();
  f();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const [name, body] of bodies) {
  const runs = { check: [] as number[], hash: [] as number[], parse: [] as number[] };
  for (let r = 0; r < 5; r++) {
    for (const [kind, hash] of [
      ['check', false],
      ['hash', true],
    ] as const)
      runs[kind].push(
        cpuMs(() => {
          const c = new JsonChecker({ maxDepth: 64, key: 'input', hash });
          try {
            for (let i = 0; i < body.length; i += 64 * 1024) c.push(body.subarray(i, i + 64 * 1024));
            c.end();
          } catch {}
        }),
      );
    runs.parse.push(cpuMs(() => JSON.parse(body.toString('utf8'))));
  }
  const rate = (ms: number) => `${median([ms]).toFixed(1)} ms (${(body.length / MB / (ms / 1000)).toFixed(0)} MB/s)`;
  console.log(
    `${name}: check ${rate(median(runs.check))}, with SHA-256 ${rate(median(runs.hash))}; JSON.parse ${rate(median(runs.parse))}`,
  );
}
