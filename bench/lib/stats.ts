/** Small statistics over repeated measurements: medians with min/max, percentiles. */

export const median = (xs: readonly number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Nearest-rank percentile (p in 0-100). */
export const percentile = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(xs: readonly number[]): Summary {
  const f = xs.filter(Number.isFinite);
  if (f.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  return { median: median(f), min: Math.min(...f), max: Math.max(...f), n: f.length };
}

/** A number with a sensible number of digits for a table cell. */
export function fmtNum(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  const a = Math.abs(x);
  if (a >= 1000) return Math.round(x).toLocaleString('en-US');
  if (a >= 100) return x.toFixed(0);
  if (a >= 10) return x.toFixed(1);
  if (a >= 1) return x.toFixed(2);
  return x.toFixed(3);
}

/** `median (min-max)` or `n/a`. */
export function fmtSummary(s: Summary | undefined): string {
  if (!s || s.n === 0) return 'n/a';
  if (s.n === 1) return fmtNum(s.median);
  return `${fmtNum(s.median)} (${fmtNum(s.min)}–${fmtNum(s.max)})`;
}
