import { createHmac, timingSafeEqual } from 'node:crypto';

/** Every job token starts with this (API keys: `berth_sk_`, worker tokens: `berth_wk_`). */
export const JOB_TOKEN_PREFIX = 'berth_jt_';

/** What a job token allows, as signed into it. */
export interface JobTokenClaims {
  /** The API key that asked for it (by id): the token counts against that key's rate limits. */
  keyId: string;
  /**
   * Fingerprint of that key's secret when the token was issued (`keyFingerprint`): a key rotated under the same id
   * (`BERTH_API_KEY` changed) no longer matches, and its tokens are refused.
   */
  keyFp: string;
  endpointId: string;
  jobId: string;
  /** `/cancel` allowed too. */
  cancel: boolean;
  /** Epoch ms after which the token is refused. */
  expiresAt: number;
}

/** Version of the payload layout; a token of another version is refused. */
const VERSION = 2;
/** Label the signing key is derived with, so it never equals a key used for anything else. */
const KEY_LABEL = 'berth job token v1';
/** Label of the key that fingerprints API keys (not the signing key itself). */
const FP_LABEL = 'berth job token key fingerprint';

/** Why `verify` refused a token. */
export type JobTokenCheck = { ok: true; claims: JobTokenClaims } | { ok: false; reason: 'malformed' | 'signature' };

/**
 * Signs and checks job tokens (docs/job-tokens.md): `berth_jt_<payload>.<signature>`, both base64url, where the
 * payload is the JSON array `[2, keyId, keyFp, endpointId, jobId, "r" | "rc", expiresAt]` and the signature its
 * HMAC-SHA256 under a key derived from the server's secret. Stateless: any process holding the same secret
 * checks any token (replicas on one PostgreSQL share it through the store). Expiry is checked by the caller,
 * against its clock.
 */
export class JobTokenSigner {
  private readonly key: Buffer;
  private readonly fpKey: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update(KEY_LABEL).digest();
    this.fpKey = createHmac('sha256', secret).update(FP_LABEL).digest();
  }

  /**
   * The fingerprint of an API key, from the SHA-256 (hex) of its secret: 16 base64url characters of an HMAC under
   * a key derived from the server secret, so the token a browser holds reveals nothing usable about the key.
   */
  keyFingerprint(keyHash: string): string {
    return createHmac('sha256', this.fpKey).update(keyHash).digest().subarray(0, 12).toString('base64url');
  }

  sign(c: JobTokenClaims): string {
    const payload = Buffer.from(
      JSON.stringify([VERSION, c.keyId, c.keyFp, c.endpointId, c.jobId, c.cancel ? 'rc' : 'r', c.expiresAt]),
    ).toString('base64url');
    return `${JOB_TOKEN_PREFIX}${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /** The claims of a well-formed token whose signature matches (expired or not). */
  verify(token: string): JobTokenCheck {
    if (!token.startsWith(JOB_TOKEN_PREFIX)) return { ok: false, reason: 'malformed' };
    const [payload, sig, ...rest] = token.slice(JOB_TOKEN_PREFIX.length).split('.');
    if (!payload || !sig || rest.length > 0 || sig.length !== SIG_CHARS || !canonical(sig))
      return { ok: false, reason: 'malformed' };
    const want = this.mac(payload);
    const got = Buffer.from(sig, 'base64url');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return { ok: false, reason: 'signature' };
    const claims = decodePayload(payload);
    return claims ? { ok: true, claims } : { ok: false, reason: 'malformed' };
  }

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }
}

/** Characters of the signature: 32 bytes of HMAC-SHA256 in unpadded base64url. */
const SIG_CHARS = 43;

/**
 * Whether `s` is the one unpadded base64url spelling of its bytes: Node's decoder ignores `=`, whitespace and
 * the unused low bits of the last character, so without this one token would have several spellings.
 */
const canonical = (s: string): boolean =>
  /^[A-Za-z0-9_-]+$/.test(s) && Buffer.from(s, 'base64url').toString('base64url') === s;

/** Whether a credential is shaped like a job token (it is then never tried as an API key). */
export const isJobToken = (secret: string): boolean => secret.startsWith(JOB_TOKEN_PREFIX);

function decodePayload(payload: string): JobTokenClaims | undefined {
  if (!canonical(payload)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 7 || v[0] !== VERSION) return undefined;
  const [, keyId, keyFp, endpointId, jobId, scope, expiresAt] = v as unknown[];
  if (typeof keyId !== 'string' || typeof keyFp !== 'string') return undefined;
  if (typeof endpointId !== 'string' || typeof jobId !== 'string') return undefined;
  if ((scope !== 'r' && scope !== 'rc') || typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt))
    return undefined;
  return { keyId, keyFp, endpointId, jobId, cancel: scope === 'rc', expiresAt };
}
