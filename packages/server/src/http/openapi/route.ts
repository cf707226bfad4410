import { inputSchemaOf } from '../../models/input.js';
import type { Principal } from '../guard.js';
import type { ApiRoute } from '../route-types.js';
import { visible, type CatalogDeps } from '../routes/catalog.js';
import type { ApiResponse } from '../types.js';
import { openApiDocument, type OpenApiTarget } from './document.js';

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document for the caller's key (its endpoints, models and routes), from the
 * route table `routes`.
 */
export function openApi(principal: Principal, deps: CatalogDeps, routes: readonly ApiRoute[]): ApiResponse {
  const endpoints: OpenApiTarget[] = deps
    .endpoints()
    .filter((id) => visible(principal, id))
    .sort()
    .map((id) => ({
      id,
      kind: 'endpoint',
      inputSchema: deps.registry.inputSchema(id) as OpenApiTarget['inputSchema'],
    }));
  const models: OpenApiTarget[] = [...deps.models.values()]
    .filter((m) => visible(principal, m.endpoint))
    .map((m) => ({
      id: m.slug,
      kind: 'model',
      inputSchema: inputSchemaOf(m) as OpenApiTarget['inputSchema'],
      description: m.description,
    }));
  return {
    status: 200,
    json: openApiDocument({
      targets: [...endpoints, ...models],
      readOnly: principal.scope?.readOnly === true,
      routes,
    }),
  };
}
