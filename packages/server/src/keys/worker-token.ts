import { API_KEY_PREFIX, newApiKey } from './key-format.js';

/** Every stored worker token starts with this (API keys: `berth_sk_`), so a leaked one is recognised as such. */
export const WORKER_TOKEN_PREFIX = 'berth_wk_';

const TOKEN_RE = /^berth_wk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

/** A fresh worker token `berth_wk_<id>_<43 base64url chars>` (256 random bits), shaped like an API key. */
export function newWorkerToken(id: string): string {
  return WORKER_TOKEN_PREFIX + newApiKey(id).slice(API_KEY_PREFIX.length);
}

/** The token id inside a stored worker token, or undefined when the text is not shaped like one. */
export function workerTokenIdOf(secret: string): string | undefined {
  return TOKEN_RE.exec(secret)?.[1];
}
