// @ts-check
// Output as a person wants it: images, audio and video players, text (growing while it streams), and the raw
// job object in a collapsible JSON view.
import { el } from './dom.js';

/** @typedef {{ kind: 'image' | 'audio' | 'video', src: string, label: string }} Media */

/**
 * The text in one stream chunk: a string, `{text}`, `{token}`, `{output}`, or an OpenAI chunk.
 *
 * @param {any} chunk
 * @returns {string}
 */
export function chunkText(chunk) {
  if (typeof chunk === 'string') return chunk;
  if (!chunk || typeof chunk !== 'object') return '';
  if (typeof chunk.text === 'string') return chunk.text;
  if (typeof chunk.token === 'string') return chunk.token;
  if (typeof chunk.token?.text === 'string') return chunk.token.text;
  if (typeof chunk.output === 'string') return chunk.output;
  const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
  if (typeof choice?.delta?.content === 'string') return choice.delta.content;
  if (typeof choice?.text === 'string') return choice.text;
  return '';
}

/**
 * The final text of an output: a string, `{text: string | string[]}`, `{output}`, OpenAI choices, or a chunk list.
 *
 * @param {any} output
 * @returns {string | undefined}
 */
export function outputText(output) {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    const parts = output.map(chunkText);
    return parts.some(Boolean) ? parts.join('') : undefined;
  }
  if (!output || typeof output !== 'object') return undefined;
  if (typeof output.text === 'string') return output.text;
  if (Array.isArray(output.text) && output.text.every((/** @type {unknown} */ t) => typeof t === 'string'))
    return output.text.join('\n\n');
  if (typeof output.output === 'string') return output.output;
  const choice = Array.isArray(output.choices) ? output.choices[0] : undefined;
  if (typeof choice?.message?.content === 'string') return choice.message.content;
  if (typeof choice?.text === 'string') return choice.text;
  return undefined;
}

/** @type {[head: string, type: string][]} */
const BASE64_IMAGE = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
  ['UklGR', 'image/webp'],
  ['R0lGOD', 'image/gif'],
];

/**
 * An image/audio/video source for a value: an http(s) or data URL, or bare base64 of a known image format.
 *
 * @param {unknown} value
 * @returns {string | undefined}
 */
function mediaSource(value) {
  if (typeof value !== 'string') return undefined;
  if (/^(https?:|data:(image|audio|video)\/|blob:)/i.test(value) || value.startsWith('/files/')) return value;
  if (value.length > 64 && /^[A-Za-z0-9+/=\s]+$/.test(value.slice(0, 256))) {
    const hit = BASE64_IMAGE.find(([head]) => value.startsWith(head));
    if (hit) return `data:${hit[1]};base64,${value}`;
  }
  return undefined;
}

/** @param {string} url */
const pathOf = (url) => {
  try {
    return new URL(url, location.href).pathname.toLowerCase();
  } catch {
    return '';
  }
};

/**
 * Media found in an output: `[{kind: 'image'|'audio'|'video', src, label}]`.
 *
 * @param {unknown} output
 * @returns {Media[]}
 */
export function findMedia(output) {
  /** @type {Media[]} */
  const found = [];
  /**
   * @param {unknown} value
   * @param {string} key
   * @param {number} depth
   * @returns {void}
   */
  const visit = (value, key, depth) => {
    if (depth > 3 || value === null || value === undefined) return;
    if (Array.isArray(value)) return value.forEach((v, i) => visit(v, `${key}[${i}]`, depth + 1));
    if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, k, depth + 1);
      return;
    }
    const src = mediaSource(value);
    if (!src) return;
    const k = key.toLowerCase();
    /** @type {Media['kind'] | undefined} */
    let kind;
    if (/^data:audio\//i.test(src) || k.startsWith('audio')) kind = 'audio';
    else if (/^data:video\//i.test(src) || k.startsWith('video'))
      kind = pathOf(src).endsWith('.webp') || /^data:image\//i.test(src) ? 'image' : 'video';
    else if (/^data:image\//i.test(src) || k.startsWith('image') || /\.(png|jpe?g|webp|gif|avif)$/.test(pathOf(src)))
      kind = 'image';
    if (kind) found.push({ kind, src, label: key });
  };
  visit(output, 'output', 0);
  return found;
}

/**
 * Renders media elements for `output` into `box` (replacing what was there).
 *
 * @param {HTMLElement} box
 * @param {unknown} output
 */
export function renderMedia(box, output) {
  box.replaceChildren();
  for (const m of findMedia(output)) {
    /** @type {HTMLElement} */
    let media;
    if (m.kind === 'image') media = el('img', { src: m.src, alt: `Output ${m.label}`, decoding: 'async' });
    else if (m.kind === 'video')
      media = el('video', {
        src: m.src,
        controls: true,
        loop: true,
        muted: true,
        playsInline: true,
        preload: 'metadata',
      });
    else media = el('audio', { src: m.src, controls: true, preload: 'metadata' });
    if (m.kind !== 'image') media.setAttribute('aria-label', `Output ${m.label}`);
    const link = el('a', {
      href: m.src,
      target: '_blank',
      rel: 'noopener noreferrer',
      textContent: m.src.startsWith('data:') ? `${m.label} (inline data)` : 'open',
    });
    box.append(el('figure', {}, [media, el('figcaption', {}, [`${m.label} `, link])]));
  }
}
