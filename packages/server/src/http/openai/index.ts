import { BerthError, isTerminal, LIMITS } from '@berth/protocol';
import { armWaiter } from '../../jobs/job-events.js';
import { parseJsonBody, readBody } from '../body.js';
import type { OpenAiContext } from './context.js';
import type { ApiResponse } from '../types.js';
import { terminalAnswer } from './job-output.js';
import { SSE_HEADERS } from '../sse-frame.js';
import { cancelQuietly, openAiEvents } from './sse.js';
import { validateChat, validateCompletion } from './validate.js';
import { LEAN } from '../../jobs/job-service.js';

export { toOpenAiError } from './errors.js';

/** The OpenAI routes' handlers; their paths, methods and docs are in the route table (`../route-table.ts`). */
export const chatCompletions = (rc: OpenAiContext) => completion(rc, '/v1/chat/completions');
export const completions = (rc: OpenAiContext) => completion(rc, '/v1/completions');
export { models as openAiModels };

/** The `openai_route` values workers see in `input`. */
export type OpenAiRouteName = '/v1/chat/completions' | '/v1/completions' | '/v1/models';

async function readObject(rc: OpenAiContext): Promise<Record<string, unknown>> {
  const buf = await readBody(rc.req.body, LIMITS.runsyncBodyBytes, rc.req.headers['content-length']);
  const body = parseJsonBody(buf);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BerthError(
      'invalid_request',
      'request body must be a JSON object like {"model": "...", "messages": [...]}',
    );
  }
  return body as Record<string, unknown>;
}

/**
 * POST chat/completions and completions: validates, queues a job with input `{openai_route, openai_input}`,
 * then answers the OpenAI JSON when the job ends, or with `stream: true` an SSE stream of the worker's chunks.
 * A client that disconnects cancels the job.
 */
async function completion(rc: OpenAiContext, route: OpenAiRouteName): Promise<ApiResponse> {
  const body = await readObject(rc);
  if (route === '/v1/chat/completions') validateChat(body);
  else validateCompletion(body);
  const stream = body['stream'] === true;
  if (stream && rc.registry.streams(rc.endpointId) === false) {
    throw new BerthError(
      'stream_not_supported',
      `the workers of endpoint ${rc.endpointId} do not stream: use a generator handler`,
    );
  }
  const job = await rc.service.submit(
    rc.endpointId,
    { input: { openai_route: route, openai_input: body } },
    { sync: true },
  );
  rc.logger.debug('openai job queued', { jobId: job.id, endpointId: rc.endpointId, route, stream });
  if (stream) return await startStream(rc, job.id);
  return await untilTerminal(rc, job.id);
}

/**
 * Holds the response until the worker's first chunk (or the job's end), so a request the worker refuses before
 * streaming (e.g. a prompt longer than the context) still gets its 4xx status and JSON error.
 */
async function startStream(rc: OpenAiContext, jobId: string): Promise<ApiResponse> {
  const waiter = armWaiter(rc.service.events, jobId);
  try {
    for (;;) {
      const job = await rc.service.get(rc.endpointId, jobId, LEAN);
      const chunks = await rc.service.takeStream(jobId);
      if (chunks.length === 0 && isTerminal(job.status)) {
        const answer = terminalAnswer(job);
        if (answer.status !== 200) return answer;
      }
      if (chunks.length > 0 || isTerminal(job.status))
        return { status: 200, headers: SSE_HEADERS, events: openAiEvents(rc, jobId, chunks) };
      if ((await waiter.wait(LIMITS.waitMax, rc.req.signal)) === 'aborted') {
        await cancelQuietly(rc, jobId, 'client disconnected');
        return { status: 499, json: null };
      }
    }
  } finally {
    waiter.dispose();
  }
}

/** GET models: asks a worker (`openai_route: "/v1/models"`) and answers its list. */
async function models(rc: OpenAiContext): Promise<ApiResponse> {
  const job = await rc.service.submit(
    rc.endpointId,
    { input: { openai_route: '/v1/models', openai_input: {} } },
    { sync: true },
  );
  return await untilTerminal(rc, job.id);
}

/** Waits for the job while the client stays; a client that leaves cancels it. */
async function untilTerminal(rc: OpenAiContext, jobId: string): Promise<ApiResponse> {
  for (;;) {
    await rc.service.waitTerminal(rc.endpointId, jobId, LIMITS.waitMax, rc.req.signal);
    const job = await rc.service.get(rc.endpointId, jobId, LEAN);
    if (isTerminal(job.status)) {
      // The chunks of a non-streaming request are not wanted by anyone: drop them.
      await rc.service.takeStream(jobId);
      return terminalAnswer(job);
    }
    if (rc.req.signal?.aborted) {
      await cancelQuietly(rc, jobId, 'client disconnected');
      return { status: 499, json: null };
    }
  }
}
