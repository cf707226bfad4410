/** One parsed sample line of the Prometheus text format. */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text format strictly enough for tests: every line is a `# HELP`/`# TYPE` comment or a sample
 * `name{label="value",...} number`; anything else throws, naming the line.
 */
export function parseExposition(text: string): { samples: ParsedSample[]; types: Map<string, string> } {
  const samples: ParsedSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.trimEnd().split('\n')) {
    const type = /^# TYPE ([a-z_:][a-z0-9_:]*) (counter|gauge|histogram)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (/^# HELP [a-z_:][a-z0-9_:]* \S.*$/.test(line)) continue;
    const m = /^([a-z_:][a-z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf)$/.exec(line);
    if (!m) throw new Error(`not a Prometheus line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"(,|$)/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

/** The value of the one sample with this name and these labels (undefined when absent). */
export function sampleValue(
  samples: ParsedSample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const hit = samples.filter(
    (s) =>
      s.name === name &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v) &&
      Object.keys(s.labels).length === Object.keys(labels).length,
  );
  if (hit.length > 1) throw new Error(`${hit.length} samples of ${name} ${JSON.stringify(labels)}`);
  return hit[0]?.value;
}

/** A histogram's per-bucket (not cumulative) counts in ms, from its `_bucket` lines (`le` in seconds). */
export function bucketsOf(samples: ParsedSample[], name: string, labels: Record<string, string>) {
  const rows = samples
    .filter((s) => s.name === `${name}_bucket` && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .map((s) => ({ le: s.labels['le'] === '+Inf' ? Infinity : Number(s.labels['le']) * 1000, n: s.value }))
    .sort((a, b) => a.le - b.le);
  const bounds = rows.filter((r) => r.le !== Infinity).map((r) => r.le);
  const counts = rows.map((r, i) => r.n - (i ? rows[i - 1]!.n : 0));
  return { bounds, counts };
}
