import { BerthError, JobRequest, LIMITS, decode, type HealthReply } from '@berth/protocol';
import { checkInput, inputSchemaOf } from '../../models/input.js';
import { costOf } from '../../models/pricing.js';
import type { PublicModel } from '../../models/types.js';
import type { JobService } from '../../jobs/job-service.js';
import type { WorkerRegistry } from '../../workers/worker-registry.js';
import { parseJsonBody, readBody } from '../body.js';
import type { Principal } from '../guard.js';
import type { ApiRequest, ApiResponse } from '../types.js';

export interface CatalogDeps {
  endpoints(): string[];
  models: Map<string, PublicModel>;
  registry: WorkerRegistry;
  service: JobService;
  /** The load-balancing endpoints (`"type": "http"`): listed with `type: 'http'` and their proxy's worker counts. */
  lb?: { has(endpointId: string): boolean; health(endpointId: string): HealthReply };
}

/** Whether the key's scope lets it see an endpoint. */
export const visible = (p: Principal, endpointId: string): boolean =>
  !p.scope?.endpoints || p.scope.endpoints.includes(endpointId);

/**
 * `GET /v2/_berth/catalog`: what the caller's key may use: endpoints (`type`: `queue`, or `http` for a
 * load-balancing endpoint served at `/v2/<ep>/lb/<path>`; whether they stream, the input schema their workers
 * announced, worker counts) and public models (kind, description, input schema, prices). No secrets.
 */
export async function catalog(principal: Principal, deps: CatalogDeps): Promise<ApiResponse> {
  const eps = deps
    .endpoints()
    .filter((id) => visible(principal, id))
    .sort();
  const endpoints = await Promise.all(
    eps.map(async (id) =>
      deps.lb?.has(id)
        ? { id, type: 'http', stream: false, inputSchema: null, workers: deps.lb.health(id).workers }
        : {
            id,
            type: 'queue',
            stream: deps.registry.streams(id) ?? false,
            inputSchema: deps.registry.inputSchema(id),
            workers: (await deps.service.health(id)).workers,
          },
    ),
  );
  const models = [...deps.models.values()]
    .filter((m) => visible(principal, m.endpoint))
    .map((m) => ({
      slug: m.slug,
      endpoint: m.endpoint,
      kind: m.kind,
      description: m.description,
      inputSchema: inputSchemaOf(m),
      price: m.price,
      priced: Object.values(m.price).some((v) =>
        typeof v === 'number' ? v > 0 : Object.values(v ?? {}).some((x) => (x ?? 0) > 0),
      ),
    }));
  return { status: 200, json: { endpoints, models } };
}

/**
 * `POST /v2/<model_slug>/estimate` with `{input}`: the cost a submit of that input would be charged, and the
 * input with defaults filled in; 400 `invalid_request` naming every bad field. Nothing is queued.
 */
export async function estimate(model: PublicModel, req: ApiRequest): Promise<ApiResponse> {
  const body = decode(
    JobRequest,
    parseJsonBody(await readBody(req.body, LIMITS.runBodyBytes, req.headers['content-length'])),
  );
  if (!body.ok) throw new BerthError('invalid_request', body.error, body.issues);
  const checked = checkInput(model, body.value.input);
  if (!checked.ok)
    throw new BerthError('invalid_request', `invalid_input: ${checked.problems.join('; ')}`, {
      problems: checked.problems,
    });
  return { status: 200, json: { cost: costOf(model, checked.input), input: checked.input } };
}
