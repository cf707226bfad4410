// @ts-check
// Small DOM helpers shared by the page's modules.
import { ApiError, messageOf } from './api.js';

/**
 * The page's element with id `id` (the page has it: the HTML and the scripts ship together).
 *
 * @param {string} id
 * @returns {HTMLElement}
 */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * An element with `props` assigned and `children` appended.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Partial<HTMLElementTagNameMap[K]>} [props]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export const el = (tag, props = {}, children = []) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};

/**
 * Shows `message` in the element `id` (hidden when there is none).
 *
 * @param {string} id
 * @param {string} [message]
 */
export function show(id, message) {
  $(id).textContent = message ?? '';
  $(id).hidden = !message;
}

/**
 * Resolves after `ms`, or at once when `signal` aborts.
 *
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
export const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * "401 unauthorized: ..." for API errors, the message otherwise.
 *
 * @param {unknown} err what was thrown
 * @returns {string}
 */
export const errorText = (err) => (err instanceof ApiError ? err.text : messageOf(err));
