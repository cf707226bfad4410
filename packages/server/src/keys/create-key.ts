import { BerthError, ENDPOINT_ID_RE } from '@berth/protocol';
import { newWorkerToken } from './worker-token.js';
import { hashApiKey, newApiKey, newKeyId } from './key-format.js';
import type { KeyStore, StoredKey } from './key-store.js';

export interface CreateKeyOptions {
  name?: string;
  /** Endpoints the key may use. Default: all. A worker token needs at least one. */
  endpoints?: string[];
  /** Only status, stream and health. Default: false. Not for worker tokens. */
  readOnly?: boolean;
  /** A worker token (`berth_wk_...`) that lets a worker serve `endpoints`, instead of an API key. Default: false. */
  worker?: boolean;
  now?: number;
}

/**
 * Creates a key (or, with `worker`, a worker token), stores its hash and returns the secret: the only time it
 * exists outside the client.
 *
 * @example const { secret } = await createApiKey(store, { name: 'ci', endpoints: ['echo'] });
 * @example const { secret } = await createApiKey(store, { worker: true, endpoints: ['echo'] }); // BERTH_WORKER_TOKEN of echo's workers
 */
export async function createApiKey(
  store: KeyStore,
  o: CreateKeyOptions = {},
): Promise<{ key: StoredKey; secret: string }> {
  const endpoints = o.endpoints === undefined ? null : [...new Set(o.endpoints)];
  for (const ep of endpoints ?? []) {
    if (!ENDPOINT_ID_RE.test(ep))
      throw new BerthError('invalid_request', `"${ep}" is not a valid endpoint id (${ENDPOINT_ID_RE})`);
  }
  if (endpoints && endpoints.length === 0)
    throw new BerthError('invalid_request', 'a key scoped to endpoints needs at least one endpoint');
  if (o.worker && endpoints === null)
    throw new BerthError('invalid_request', 'a worker token names the endpoints its workers serve (endpoints)');
  if (o.worker && o.readOnly)
    throw new BerthError('invalid_request', 'read-only applies to API keys, not worker tokens');
  const name = (o.name ?? '').trim();
  if (name.length > 200) throw new BerthError('invalid_request', 'key name longer than 200 characters');
  const id = newKeyId();
  const secret = o.worker ? newWorkerToken(id) : newApiKey(id);
  const key: StoredKey = {
    id,
    name,
    hash: hashApiKey(secret),
    endpoints,
    readOnly: o.readOnly ?? false,
    kind: o.worker ? 'worker' : 'api',
    createdAt: o.now ?? Date.now(),
    revokedAt: null,
  };
  await store.insert(key);
  return { key, secret };
}
