// @ts-check
// Small time-series charts on a canvas for the Monitor view: lines over a time window, gaps where a value is
// missing, a few grid lines, colours from the page's CSS variables (light and dark). No library.

/** @typedef {(number | null)[]} Values a value per slot, null where there is none */

/**
 * The smallest "nice" number (1, 2, 2.5, 5 x 10^n) at or above `v`; at least `floor`.
 *
 * @param {number} v
 * @param {number} [floor]
 */
export function niceCeil(v, floor = 1) {
  if (!(v > floor)) return floor;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/**
 * "850 ms", "1.2 s", "2 min" for a duration in ms.
 *
 * @param {number | null | undefined} v
 */
export function formatMs(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${Number((v / 1000).toFixed(v < 10_000 ? 2 : 1))} s`;
  return `${Number((v / 60_000).toFixed(1))} min`;
}

/**
 * A count or rate with at most two decimals ("12", "0.4", "1.25").
 *
 * @param {number | null | undefined} v
 */
export function formatNumber(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return String(Number(v.toFixed(v >= 100 ? 0 : 2)));
}

/**
 * Per-second rates from per-slot counts: each count over its slot's length, the last (partial) slot over the time
 * elapsed in it (at least 1 s, so a job in the slot's first moment does not read as a spike).
 *
 * @param {Values} counts
 * @param {number[]} t slot start times (ms)
 * @param {number} slotMs
 * @param {number} now
 * @returns {Values}
 */
export function ratePerSecond(counts, t, slotMs, now) {
  return counts.map((n, i) => {
    if (n === null) return null;
    const ms = i === counts.length - 1 ? Math.min(slotMs, Math.max(1000, now - /** @type {number} */ (t[i]))) : slotMs;
    return (n * 1000) / ms;
  });
}

/**
 * The last value that is not null (the latest sample), or null.
 *
 * @param {(number | null | undefined)[]} values
 * @returns {number | null}
 */
export function lastValue(values) {
  for (let i = values.length - 1; i >= 0; i--) {
    const v = values[i];
    if (v !== null && v !== undefined) return v;
  }
  return null;
}

/** @param {number} ms */
const clock = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/**
 * @typedef {object} ChartData
 * @property {number[]} t slot start times (ms)
 * @property {{ values: (number | null | undefined)[], color: string }[]} series
 * @property {number} slotMs
 * @property {number} from
 * @property {number} now
 * @property {(v: number) => string} [format] labels the y axis (default formatNumber)
 * @property {number} [floor] the smallest top of the y axis (default 1)
 */

/**
 * Draws `series` ({values, color: CSS variable name}) against slot times `t` (slot starts; points at slot middles,
 * the last one at `now`) over [from, now]. `format` labels the y axis.
 *
 * @param {HTMLCanvasElement} canvas
 * @param {ChartData} data
 */
export function drawChart(canvas, { t, series, slotMs, from, now, format = formatNumber, floor = 1 }) {
  const css = getComputedStyle(canvas);
  /** @param {string} name */
  const color = (name) => css.getPropertyValue(name).trim() || '#888';
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth;
  const h = canvas.clientHeight;
  if (!w || !h) return;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const g = canvas.getContext('2d');
  if (!g) return;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  const left = 58;
  const right = 8;
  const top = 8;
  const bottom = 20;
  let max = 0;
  for (const s of series) for (const v of s.values) if (v !== null && v !== undefined && v > max) max = v;
  const ymax = niceCeil(max, floor);
  /** @param {number} ms */
  const x = (ms) => left + ((ms - from) / Math.max(1, now - from)) * (w - left - right);
  /** @param {number} v */
  const y = (v) => top + (1 - v / ymax) * (h - top - bottom);
  g.font = `11px ${css.fontFamily || 'system-ui'}`;
  g.lineWidth = 1;
  // Grid: 0, half, top; time ticks every 5 min (15 min window) or 15 min (hour).
  g.strokeStyle = color('--grid');
  g.fillStyle = color('--muted');
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (const v of [0, ymax / 2, ymax]) {
    g.beginPath();
    g.moveTo(left, Math.round(y(v)) + 0.5);
    g.lineTo(w - right, Math.round(y(v)) + 0.5);
    g.stroke();
    g.fillText(format(v), left - 6, y(v));
  }
  const span = now - from;
  const step = span > 30 * 60_000 ? 15 * 60_000 : span > 10 * 60_000 ? 5 * 60_000 : 60_000;
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (let ms = Math.ceil(from / step) * step; ms <= now; ms += step) {
    const px = Math.round(x(ms)) + 0.5;
    g.beginPath();
    g.moveTo(px, top);
    g.lineTo(px, h - bottom);
    g.stroke();
    g.fillText(clock(ms), Math.min(Math.max(px, left + 16), w - right - 16), h - bottom + 4);
  }
  // Lines: a gap where a value is missing, a dot for a lone point.
  g.lineWidth = 2;
  g.lineJoin = 'round';
  for (const s of series) {
    g.strokeStyle = g.fillStyle = color(s.color);
    /** @param {number} i */
    const at = (i) => x(Math.min(now, /** @type {number} */ (t[i]) + slotMs / 2));
    let open = false;
    g.beginPath();
    s.values.forEach((v, i) => {
      if (v === null || v === undefined) return void (open = false);
      const lone = (i === 0 || s.values[i - 1] == null) && (i === s.values.length - 1 || s.values[i + 1] == null);
      if (lone) g.moveTo(at(i) + 2.5, y(v)), g.arc(at(i), y(v), 2.5, 0, 2 * Math.PI);
      else if (open) g.lineTo(at(i), y(v));
      else g.moveTo(at(i), y(v));
      open = !lone;
    });
    g.stroke();
  }
}
