import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random secret with a readable prefix, e.g. `berth_3q2…`: 32 letters and digits (~190 bits), easy to double-click. */
export function generateKey(prefix: string): string {
  let out = prefix;
  for (let i = 0; i < 32; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** The value of an environment variable, or a fresh key when it is unset or empty. */
export function keyFromEnv(env: NodeJS.ProcessEnv, name: string, prefix: string): { key: string; generated: boolean } {
  const value = env[name]?.trim();
  return value ? { key: value, generated: false } : { key: generateKey(prefix), generated: true };
}
