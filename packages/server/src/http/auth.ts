import { createHash, timingSafeEqual } from 'node:crypto';
import { BerthError } from '@berth/protocol';
import type { Principal } from './guard.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Turns an `Authorization` header into the caller, or throws 401 `unauthorized`. */
export interface Authenticator {
  authenticate(header: string | undefined): Principal | Promise<Principal>;
}

/**
 * Checks the `Authorization` header against a set of secrets, accepting `Bearer <key>` and the bare key.
 * Secrets are kept only as SHA-256 digests and compared in constant time.
 */
export class KeyChecker {
  private readonly digests: { id: string; digest: Buffer }[];

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
    const d = digest(secret);
    let found: Principal | undefined;
    for (const k of this.digests) if (timingSafeEqual(k.digest, d)) found ??= { keyId: k.id };
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
