import { BerthError, ENDPOINT_ID_RE } from '@berth/protocol';
import { hashApiKey, newApiKey, newKeyId } from './key-format.js';
import type { KeyStore, StoredKey } from './key-store.js';

export interface CreateKeyOptions {
  name?: string;
  /** Endpoints the key may use. Default: all. */
  endpoints?: string[];
  /** Only status, stream and health. Default: false. */
  readOnly?: boolean;
  now?: number;
}

/**
 * Creates a key, stores its hash and returns the secret: the only time it exists outside the client.
 *
 * @example const { secret } = await createApiKey(store, { name: 'ci', endpoints: ['echo'] });
 */
export async function createApiKey(store: KeyStore, o: CreateKeyOptions = {}): Promise<{ key: StoredKey; secret: string }> {
  const endpoints = o.endpoints === undefined ? null : [...new Set(o.endpoints)];
  for (const ep of endpoints ?? []) {
    if (!ENDPOINT_ID_RE.test(ep)) throw new BerthError('invalid_request', `"${ep}" is not a valid endpoint id (${ENDPOINT_ID_RE})`);
  }
  if (endpoints && endpoints.length === 0) throw new BerthError('invalid_request', 'a key scoped to endpoints needs at least one endpoint');
  const name = (o.name ?? '').trim();
  if (name.length > 200) throw new BerthError('invalid_request', 'key name longer than 200 characters');
  const id = newKeyId();
  const secret = newApiKey(id);
  const key: StoredKey = { id, name, hash: hashApiKey(secret), endpoints, readOnly: o.readOnly ?? false, createdAt: o.now ?? Date.now(), revokedAt: null };
  await store.insert(key);
  return { key, secret };
}
