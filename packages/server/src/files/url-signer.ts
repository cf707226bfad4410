import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signs and checks file URLs: `sig` = base64url(HMAC-SHA256(secret, "<name>\n<expires>")), where `expires` is
 * unix seconds. Changing the name or the expiry invalidates the signature.
 */
export class UrlSigner {
  constructor(private readonly secret: string) {}

  sign(name: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${name}\n${expires}`).digest('base64url');
  }

  /** True when `sig` is the signature of `name` and `expires` (constant-time comparison). */
  verify(name: string, expires: number, sig: string): boolean {
    const want = Buffer.from(this.sign(name, expires));
    const got = Buffer.from(sig);
    return got.length === want.length && timingSafeEqual(got, want);
  }
}
