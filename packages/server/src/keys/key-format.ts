import { createHash, randomBytes } from 'node:crypto';

/** Every stored API key starts with this, so scanners and people recognise a leaked one. */
export const API_KEY_PREFIX = 'berth_sk_';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const KEY_RE = /^berth_sk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

/** A fresh key id: 12 lowercase letters and digits (public: shown by `berth keys list`, used in logs). */
export function newKeyId(): string {
  const bytes = randomBytes(12);
  let id = '';
  for (const b of bytes) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

/**
 * A fresh secret key: `berth_sk_<id>_<43 base64url chars>` (256 random bits). The id in the key lets the
 * server find the one stored hash to compare with, in constant time, instead of searching by secret.
 */
export function newApiKey(id = newKeyId()): string {
  return `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
}

/** The key id inside a stored-key secret, or undefined when the text is not shaped like one. */
export function keyIdOf(secret: string): string | undefined {
  return KEY_RE.exec(secret)?.[1];
}

/**
 * SHA-256 of the whole key, hex. A fast hash is enough here: the key carries 256 random bits, so nobody can
 * guess it from its hash by brute force (slow hashes such as scrypt or bcrypt exist for low-entropy passwords),
 * and checking a request stays at a few microseconds.
 */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
