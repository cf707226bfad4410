import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import type { CatalogDeps } from '../routes/catalog.js';
import { openApiDocument } from './document.js';
import { ROUTES } from '../route-table.js';
import { openApi } from './route.js';

const DOCS_API = new URL('../../../../../docs/api.md', import.meta.url);
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'];

/** Structural checks of an OpenAPI 3.1 document (what a validator would refuse); returns the problems. */
function problemsOf(doc: any): string[] {
  const problems: string[] = [];
  if (doc.openapi !== '3.1.0') problems.push(`openapi is ${doc.openapi}`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string')
    problems.push('info.title and info.version must be strings');
  const schemes = Object.keys(doc.components?.securitySchemes ?? {});
  for (const req of doc.security ?? [])
    for (const name of Object.keys(req))
      if (!schemes.includes(name)) problems.push(`security names unknown scheme ${name}`);
  const ids = new Set<string>();
  const refs: string[] = [];
  const collect = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) k === '$ref' ? refs.push(x as string) : collect(x);
  };
  collect(doc);
  for (const r of refs) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(r)?.[1];
    if (!name || !doc.components.schemas[name]) problems.push(`$ref ${r} does not resolve`);
  }
  for (const name of Object.keys(doc.components?.schemas ?? {}))
    if (!/^[a-zA-Z0-9.\-_]+$/.test(name)) problems.push(`component name ${name}`);
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    if (!path.startsWith('/')) problems.push(`path ${path} must start with /`);
    const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const [method, o] of Object.entries<any>(item)) {
      if (!METHODS.includes(method)) problems.push(`${path}: ${method} is not an HTTP method`);
      if (ids.has(o.operationId)) problems.push(`operationId ${o.operationId} twice`);
      ids.add(o.operationId);
      if (!o.responses || !Object.keys(o.responses).length) problems.push(`${method} ${path}: no responses`);
      for (const [code, r] of Object.entries<any>(o.responses ?? {})) {
        if (!/^([1-5]XX|[1-5]\d\d|default)$/.test(code)) problems.push(`${method} ${path}: response code ${code}`);
        if (typeof r.description !== 'string') problems.push(`${method} ${path} ${code}: no description`);
      }
      const declared = (o.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      for (const p of params)
        if (!declared.includes(p)) problems.push(`${method} ${path}: path parameter ${p} not declared`);
      for (const p of o.parameters ?? [])
        if (p.in === 'path' && p.required !== true)
          problems.push(`${method} ${path}: path parameter ${p.name} must be required`);
    }
  }
  return problems;
}

/** Every route of docs/api.md's table as `[method, path]`, with <ep>, <model_slug>, <id>, <name> filled in. */
function docRoutes(ep: string, slug: string): [string, string][] {
  const rows = readFileSync(DOCS_API, 'utf8')
    .split('\n')
    .filter((l) => /^\| `\//.test(l));
  const out: [string, string][] = [];
  for (const row of rows) {
    const [, routeCell, methodCell] = row.split('|').map((c) => c.trim());
    const paths = [...routeCell!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const methods = methodCell!.split(',').map((m) => m.trim().toLowerCase());
    paths.forEach((raw, i) => {
      let p = raw.replace(/\[[^\]]*\]/g, '').replace(/\?.*$/, '');
      // `.../completions` after `/v2/<ep>/openai/v1/chat/completions`: the first route's prefix through /v1.
      if (p.startsWith('...')) p = paths[0]!.replace(/(\/v1)\/.*$/, '$1') + p.slice(3);
      p = p.replace('<ep>', ep).replace('<model_slug>', slug).replace('<id>', '{job_id}').replace('<name>', '{name}');
      const ms = paths.length > 1 && methods.length === paths.length ? [methods[i]!] : methods;
      for (const m of ms) out.push([m, p]);
    });
  }
  return out;
}

const greet = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1 } },
  required: ['name'],
  $schema: 'https://json-schema.org/draft/2020-12/schema',
};
const full = openApiDocument({
  targets: [
    { id: 'greet', kind: 'endpoint', inputSchema: greet },
    { id: 'echo', kind: 'endpoint' },
    { id: 'shapes', kind: 'model', inputSchema: greet, description: 'a model' },
  ],
  readOnly: false,
  routes: ROUTES,
}) as any;

describe('GET /openapi.json document', () => {
  it('is a well-formed OpenAPI 3.1 document: refs resolve, ids unique, path parameters declared', () => {
    expect(problemsOf(full)).toEqual([]);
    expect(Object.keys(full.paths).length).toBeGreaterThan(30);
  });

  it('passes a real OpenAPI 3.1 validator (@seriousme/openapi-schema-validator), full and read-only', async () => {
    const readOnly = openApiDocument({
      targets: [{ id: 'greet', kind: 'endpoint', inputSchema: greet }],
      readOnly: true,
      routes: ROUTES,
    });
    const validator = new Validator();
    for (const doc of [full, readOnly]) {
      const res = await validator.validate(structuredClone(doc));
      expect(res.errors).toBeUndefined();
      expect([res.valid, validator.version]).toEqual([true, '3.1']);
    }
    // The validator can refuse: a parameter `in: body` (OpenAPI 2 only).
    const broken = structuredClone(full);
    broken.paths['/v2/greet/run'].post.parameters = [{ name: 'x', in: 'body', schema: { type: 'string' } }];
    expect((await validator.validate(broken)).valid).toBe(false);
  });

  it('has every route of docs/api.md, with its methods', () => {
    const routes = docRoutes('greet', 'shapes');
    expect(routes.length).toBeGreaterThanOrEqual(22);
    const missing = routes.filter(([m, p]) => !full.paths[p]?.[m]).map(([m, p]) => `${m.toUpperCase()} ${p}`);
    expect(missing).toEqual([]);
  });

  it("each endpoint's request body is the protocol's JobRequest with the input schema its worker announced", () => {
    const body = full.paths['/v2/greet/run'].post.requestBody.content['application/json'].schema;
    expect(body.allOf[0]).toEqual({ $ref: '#/components/schemas/JobRequest' });
    expect(body.allOf[1].properties.input).toEqual({ $ref: '#/components/schemas/input.greet' });
    expect(full.components.schemas['input.greet']).toEqual({
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 } },
      required: ['name'],
    });
    expect(full.components.schemas['input.echo']).toMatchObject({ type: 'object' });
    expect(full.components.schemas.JobRequest.properties).toMatchObject({
      input: { type: 'object' },
      webhook: { type: 'string', maxLength: 2048 },
      policy: { type: 'object' },
    });
    expect(full.components.schemas.JobObject.properties.status.enum).toEqual([
      'IN_QUEUE',
      'IN_PROGRESS',
      'COMPLETED',
      'FAILED',
      'CANCELLED',
      'TIMED_OUT',
    ]);
    expect(full.components.schemas.Error.properties.code.enum).toContain('job_not_found');
    expect(full.paths['/ping'].get.security).toEqual([]);
  });

  it('follows the key: scoped endpoints only; a read-only key gets no run, cancel, retry, purge or OpenAI routes', () => {
    const deps = {
      endpoints: () => ['greet', 'echo', 'image'],
      models: new Map(),
      registry: { inputSchema: (id: string) => (id === 'greet' ? greet : null) },
    } as unknown as CatalogDeps;
    const doc = (openApi({ keyId: 'k1', scope: { endpoints: ['greet'], readOnly: true } }, deps, ROUTES) as any).json;
    expect(problemsOf(doc)).toEqual([]);
    const paths = Object.keys(doc.paths);
    expect(
      paths.filter((p) => p.startsWith('/v2/') && !p.startsWith('/v2/_berth')).every((p) => p.startsWith('/v2/greet/')),
    ).toBe(true);
    expect(paths).toContain('/v2/greet/status/{job_id}');
    expect(paths.filter((p) => /\/(run|runsync|cancel|retry|purge-queue|openai)\b/.test(p))).toEqual([]);
    // The Batch Jobs GETs are reads a read-only key may call; their writes are not shown to it.
    expect(Object.keys(doc.paths['/v2/greet/batch'])).toEqual(['get']);
    expect(doc.paths['/v2/greet/batch/{batch_id}/finalize']).toBeUndefined();
    const all = (openApi({ keyId: 'admin' }, deps, ROUTES) as any).json;
    expect(Object.keys(all.paths)).toEqual(
      expect.arrayContaining(['/v2/echo/run', '/v2/image/runsync', '/v2/greet/cancel/{job_id}']),
    );
  });
});
