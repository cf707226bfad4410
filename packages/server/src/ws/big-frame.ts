import { WorkerMessage, decode, type DecodeResult } from '@berth/protocol';
import { parseOffThread } from '../http/json-pool.js';
import { RawJson } from '../core/raw-json.js';

/**
 * Decodes a big worker frame (`BIG_JSON_BYTES` or more: a 19 MB result) on a pool thread: the same checks as
 * `decodeWorkerMessage`, with a `job.complete`'s `output` kept as the bytes it came as (`RawJson`), so the
 * result is stored and answered without being parsed and serialized again on the event loop.
 */
export async function decodeBigFrame(data: Buffer): Promise<DecodeResult<WorkerMessage>> {
  const r = await parseOffThread(data, 'output');
  if (!r.ok) return { ok: false, error: 'not valid JSON' };
  const value = r.value as Record<string, unknown>;
  if (r.span) value['output'] = null; // checked as present here; its bytes replace it below
  const decoded = decode(WorkerMessage, value);
  if (decoded.ok && r.span && decoded.value.type === 'job.complete')
    decoded.value.output = new RawJson(data.subarray(r.span[0], r.span[1]));
  return decoded;
}
