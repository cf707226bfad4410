// Summarises V8 CPU profiles (`BENCH_CPU_PROF=<dir> npm run bench ...` writes them): self time per function
// and per file, heaviest first.  node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 30]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' } },
});
const top = Number(values.top);
for (const file of positionals) {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byNode = new Map<number, number>();
  prof.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
  const total = [...byNode.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  const url = new Map<string, number>();
  for (const n of prof.nodes) {
    const us = byNode.get(n.id) ?? 0;
    const u = n.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|packages)\//, '$1/') || '(native)';
    const k = `${n.callFrame.functionName || '(anonymous)'} ${u}:${n.callFrame.lineNumber + 1}`;
    fn.set(k, (fn.get(k) ?? 0) + us);
    url.set(u, (url.get(u) ?? 0) + us);
  }
  const show = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          `  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
      )
      .join('\n');
  console.log(
    `${file}: ${(total / 1000).toFixed(0)} ms sampled\nby function (self):\n${show(fn)}\nby file (self):\n${show(url)}\n`,
  );
}
