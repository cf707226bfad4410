import { BerthError } from '@berth/protocol';

/** The header RunPod's load balancer answers with and reads back for affinity. */
export const WORKER_ID_HEADER = 'x-runpod-worker-id';

/**
 * `X-Runpod-Worker-Id` as a request carries it (RunPod's worker affinity): absent or empty, normal routing;
 * `<id>` soft (prefer it, fall back); `strict <id>` (only it: wait while busy, 404 when gone); `strict-resume <id>`
 * (as strict, and a worker stopped by scale-down is started again under its id).
 */
export type Affinity = { mode: 'none' } | { mode: 'soft' | 'strict' | 'strict-resume'; workerId: string };

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Reads the header; a malformed one is 400 `invalid_request`. */
export function parseAffinity(header: string | undefined): Affinity {
  const v = header?.trim() ?? '';
  if (v === '') return { mode: 'none' };
  const parts = v.split(/\s+/);
  const [first, second] = parts;
  const mode = parts.length === 1 ? 'soft' : first;
  const workerId = parts.length === 1 ? first! : second;
  if (
    parts.length > 2 ||
    (mode !== 'soft' && mode !== 'strict' && mode !== 'strict-resume') ||
    !workerId ||
    !ID_RE.test(workerId)
  )
    throw new BerthError(
      'invalid_request',
      `X-Runpod-Worker-Id must be "<worker id>", "strict <worker id>" or "strict-resume <worker id>" (got ${JSON.stringify(v.slice(0, 80))})`,
    );
  return { mode, workerId };
}
