import { createHash, timingSafeEqual } from 'node:crypto';
import { BerthError } from '@berth/protocol';
import type { Principal } from './guard.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Turns an `Authorization` header into the caller, or throws 401 `unauthorized`. */
export interface Authenticator {
  authenticate(header: string | undefined): Principal | Promise<Principal>;
}

/** Distinct accepted secrets remembered (more clears the memo: it never grows past this). */
const MEMO_MAX = 64;

/**
 * Checks the `Authorization` header against a set of secrets, accepting `Bearer <key>` and the bare key.
 * Secrets are kept as SHA-256 digests and compared in constant time. A secret that matched is remembered (at
 * most `MEMO_MAX`), so a client's next requests cost a map lookup instead of a SHA-256 and a compare per key
 * (a visible share of the per-request CPU). Only accepted secrets are remembered: these are the configured keys
 * themselves, which the process holds anyway (options, environment); unknown ones are hashed every time.
 */
export class KeyChecker {
  private readonly digests: { id: string; digest: Buffer }[];
  private readonly memo = new Map<string, Principal>();

  constructor(secrets: string[], prefix: string) {
    this.digests = secrets.map((s, i) => ({ id: `${prefix}${i + 1}`, digest: digest(s) }));
  }

  /** The secret carried by an Authorization header value, or undefined when there is none. */
  static secretOf(header: string | undefined): string | undefined {
    if (!header) return undefined;
    const v = header.trim();
    const m = /^bearer\s+(.+)$/i.exec(v);
    const secret = (m ? m[1]! : v).trim();
    return secret === '' ? undefined : secret;
  }

  /** The matching key, or undefined. */
  match(secret: string): Principal | undefined {
    const known = this.memo.get(secret);
    if (known) return { keyId: known.keyId };
    const d = digest(secret);
    let found: Principal | undefined;
    for (const k of this.digests) if (timingSafeEqual(k.digest, d)) found ??= { keyId: k.id };
    if (found) {
      if (this.memo.size >= MEMO_MAX) this.memo.clear();
      this.memo.set(secret, { keyId: found.keyId });
    }
    return found;
  }

  /** 401 `unauthorized` unless the header carries a known key. */
  authenticate(header: string | undefined): Principal {
    const secret = KeyChecker.secretOf(header);
    if (!secret) throw new BerthError('unauthorized', 'missing API key: send Authorization: Bearer <key>');
    const p = this.match(secret);
    if (!p) throw new BerthError('unauthorized', 'unknown API key');
    return p;
  }
}
