/**
 * `node --import tsx bench/volume/chart.ts <volume.json>... --out <file.svg>`: the volume curve of one or more
 * `--volume` runs as a plain SVG (no dependency): four panels against the depth queued (log scale), one line per
 * store and run (a store's later runs dashed), the retention sweep's longest stall as a marker in the stall panel.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { VolumeRow } from './run-volume.js';

interface Result {
  store: string;
  jobs: number;
  rows: VolumeRow[];
  sweep_stall_ms?: number;
}

const PANELS: [key: string, title: string][] = [
  ['runsync_c50_rps', '/runsync c=50 (req/s)'],
  ['runsync_c50_p99_ms', '/runsync c=50 p99 (ms)'],
  ['claim_p99_ms', 'claim p99 (ms)'],
  ['stall_ms', 'longest stall (ms); ◆ during the sweep'],
];
const COLOURS: Record<string, string> = { sqlite: '#1f77b4', postgres: '#d62728' };
const W = 330;
const H = 220;
const PAD = { l: 52, r: 34, t: 28, b: 34 };

function panel(results: Result[], key: string, title: string, ox: number, oy: number): string {
  const xs = results.flatMap((r) => r.rows.map((x) => x['queued']!));
  const ys = results.flatMap((r) => [
    ...r.rows.map((x) => x[key] ?? 0),
    ...(key === 'stall_ms' && r.sweep_stall_ms ? [r.sweep_stall_ms] : []),
  ]);
  const [x0, x1] = [Math.log10(Math.min(...xs)), Math.log10(Math.max(...xs))];
  const y1 = Math.max(...ys) * 1.1 || 1;
  const px = (q: number) => ox + PAD.l + ((Math.log10(q) - x0) / (x1 - x0 || 1)) * (W - PAD.l - PAD.r);
  const py = (v: number) => oy + H - PAD.b - (v / y1) * (H - PAD.t - PAD.b);
  const out = [
    `<text x="${ox + W / 2}" y="${oy + 16}" text-anchor="middle" font-weight="bold">${title}</text>`,
    `<line x1="${ox + PAD.l}" y1="${py(0)}" x2="${ox + W - PAD.r}" y2="${py(0)}" stroke="#999"/>`,
    `<line x1="${ox + PAD.l}" y1="${py(0)}" x2="${ox + PAD.l}" y2="${oy + PAD.t}" stroke="#999"/>`,
  ];
  for (const f of [0, 0.5, 1]) {
    const v = y1 * f;
    out.push(
      `<text x="${ox + PAD.l - 4}" y="${py(v) + 4}" text-anchor="end">${Math.round(v).toLocaleString('en-US')}</text>`,
    );
  }
  for (const q of [...new Set(xs)])
    out.push(`<text x="${px(q)}" y="${oy + H - PAD.b + 16}" text-anchor="middle">${q.toLocaleString('en-US')}</text>`);
  for (const [i, r] of results.entries()) {
    const c = COLOURS[r.store] ?? '#333';
    const pts = r.rows.map((x) => `${px(x['queued']!).toFixed(1)},${py(x[key] ?? 0).toFixed(1)}`);
    const dash = results.findIndex((x) => x.store === r.store) < i ? ' stroke-dasharray="5 3"' : '';
    out.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${dash} points="${pts.join(' ')}"/>`);
    for (const p of pts) out.push(`<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${c}"/>`);
    if (key === 'stall_ms' && r.sweep_stall_ms !== undefined) {
      const [x, y] = [px(Math.max(...r.rows.map((x) => x['queued']!))), py(r.sweep_stall_ms)];
      out.push(`<path d="M${x} ${y - 6} L${x + 6} ${y} L${x} ${y + 6} L${x - 6} ${y} Z" fill="${c}" opacity="0.7"/>`);
    }
  }
  return out.join('\n');
}

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
if (outAt < 0 || outAt === args.length - 1) throw new Error('usage: chart.ts <volume.json>... --out <file.svg>');
const out = args[outAt + 1]!;
const files = args.filter((_, i) => i !== outAt && i !== outAt + 1);
const runs = files.map(
  (f) => JSON.parse(readFileSync(f, 'utf8')) as { date: string; results: Result[]; load?: string },
);
const results = runs.flatMap((r) => r.results);
const legend = results
  .map((r, i) => {
    const c = COLOURS[r.store] ?? '#333';
    const [x, y] = [12 + (i % 2) * W, 2 * H + 12 + Math.floor(i / 2) * 16];
    return `<rect x="${x}" y="${y}" width="12" height="12" fill="${c}"/><text x="${x + 18}" y="${y + 10}">${r.store}, ${r.jobs.toLocaleString('en-US')} jobs, run ${runs.find((x) => x.results.includes(r))?.date.slice(0, 16)}Z</text>`;
  })
  .join('\n');
const body = PANELS.map(([k, t], i) => panel(results, k, t, (i % 2) * W, Math.floor(i / 2) * H)).join('\n');
writeFileSync(
  out,
  `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${2 * H + 30 + Math.ceil(results.length / 2) * 16}" font-family="sans-serif" font-size="11">\n` +
    `<rect width="100%" height="100%" fill="white"/>\n${body}\n${legend}\n` +
    `<text x="${W}" y="${2 * H + 26 + Math.ceil(results.length / 2) * 16}" text-anchor="middle">x: jobs queued (log scale); later runs of a store dashed; 2 shared, loaded cores (see docs/benchmarks.md)</text>\n</svg>\n`,
);
process.stdout.write(`${out}\n`);
