import { BerthError, decodeJobRequest, type JobRequest } from '@berth/protocol';
import { parseJsonBody } from '../http/body.js';

/** What a create or add call asked for: the requests, and (create) the batch's name and webhook. */
export interface BatchBody {
  requests: JobRequest[];
  name?: string;
  webhook?: string;
}

const NAME_MAX = 200;

/** Whether the body is JSON lines (one `/run` body a line): `application/x-ndjson`, `application/jsonl`... */
export function isJsonLines(contentType: string | undefined): boolean {
  const t = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return t === 'application/x-ndjson' || t === 'application/jsonl' || t === 'application/x-jsonlines';
}

/** A batch name: a string of 1 to 200 characters, or null (clears it). */
export function batchName(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > NAME_MAX)
    throw new BerthError('invalid_request', `name must be a string of 1 to ${NAME_MAX} characters`);
  return v;
}

/** One request of a batch: a `/run` body; the batch has the webhook, a request has none of its own. */
function batchRequest(v: unknown, at: string): JobRequest {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new BerthError('invalid_request', `${at}: must be a /run body like {"input": {...}}`);
  const r = decodeJobRequest(v);
  if (!r.ok) throw new BerthError('invalid_request', `${at}: ${r.error}`, r.issues);
  if (r.value.webhook !== undefined || r.value.webhookEvents !== undefined)
    throw new BerthError(
      'invalid_request',
      `${at}: a batch request has no webhook of its own; give the batch one ("webhook" when creating it)`,
    );
  if (r.value.token !== undefined)
    throw new BerthError('invalid_request', `${at}: job tokens are not issued for batch requests`);
  return r.value;
}

function requestList(list: unknown[], maxPerCall: number, path: string): JobRequest[] {
  if (list.length > maxPerCall)
    throw new BerthError(
      'batch_too_many_requests',
      `${list.length} requests in one call; at most ${maxPerCall} (add the rest in more calls)`,
      { limit: maxPerCall },
    );
  return list.map((v, i) => batchRequest(v, `${path}[${i}]`));
}

/**
 * Reads a create or add body. Accepted shapes (every version of RunPod's page, docs/api.md#batch-jobs): a JSON array
 * of `/run` bodies; an object `{"requests": [...]}` (with `name` and `webhook` on create); JSON lines, one `/run`
 * body a line, when the Content-Type says so. An empty body is no requests.
 */
export function readBatchBody(
  buf: Buffer,
  contentType: string | undefined,
  maxPerCall: number,
  create: boolean,
): BatchBody {
  if (buf.length === 0 || buf.toString('utf8').trim() === '') return { requests: [] };
  if (isJsonLines(contentType)) {
    const lines = buf
      .toString('utf8')
      .split('\n')
      .map((l, i) => [l.trim(), i + 1] as const)
      .filter(([l]) => l !== '');
    if (lines.length > maxPerCall) return { requests: requestList(lines, maxPerCall, 'line') };
    const parsed = lines.map(([l, n]) => {
      try {
        return parseJsonBody(Buffer.from(l));
      } catch (err) {
        throw new BerthError('invalid_json', `line ${n}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
    return { requests: parsed.map((v, i) => batchRequest(v, `line ${lines[i]![1]}`)) };
  }
  const body = parseJsonBody(buf);
  if (Array.isArray(body)) return { requests: requestList(body, maxPerCall, 'requests') };
  if (body === null || typeof body !== 'object')
    throw new BerthError('invalid_request', 'the body must be a JSON array of /run bodies, or {"requests": [...]}');
  const o = body as Record<string, unknown>;
  const list = o['requests'] ?? [];
  if (!Array.isArray(list)) throw new BerthError('invalid_request', 'requests must be an array of /run bodies');
  const out: BatchBody = { requests: requestList(list, maxPerCall, 'requests') };
  if (!create) return out;
  const name = batchName(o['name']);
  if (name !== undefined) out.name = name;
  const webhook = o['webhook'];
  if (webhook !== undefined && webhook !== null) {
    // The same check as a job's webhook: a URL the job schema accepts.
    const r = decodeJobRequest({ input: {}, webhook });
    if (!r.ok) throw new BerthError('invalid_request', `webhook: ${r.error}`, r.issues);
    out.webhook = r.value.webhook!;
  }
  return out;
}
