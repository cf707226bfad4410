// Small DOM helpers shared by the page's modules.
import { ApiError } from './api.js';

export const $ = (id) => document.getElementById(id);

/** Shows `message` in the element `id` (hidden when there is none). */
export function show(id, message) {
  $(id).textContent = message ?? '';
  $(id).hidden = !message;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** "401 unauthorized: ..." for API errors, the message otherwise. */
export const errorText = (err) => (err instanceof ApiError ? err.text : (err.message ?? String(err)));
