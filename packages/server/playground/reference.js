// @ts-check
// The API reference page (/docs): GET /openapi.json with the tab's key, shown per endpoint and model: each route
// with its method, summary, parameters, request body (the endpoint's input schema) and answer.
import { api, ApiError, getKey, setKey, takeKeyFromFragment } from './api.js';
import { $, el, errorText, show } from './dom.js';

/** @typedef {Record<string, any>} Schema an OpenAPI schema object (any keyword may be missing) */

/** The OpenAPI document, once loaded. @type {any} */
let doc;

/** `#/components/schemas/X` -> the schema, one level deep (enough to show a body). */
/** @param {Schema | undefined} s @returns {Schema | undefined} */
const resolve = (s) => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
/** @param {Schema | undefined} s @returns {string | undefined} */
const refName = (s) => (s?.$ref ? s.$ref.split('/').pop() : undefined);

/**
 * The parts of an `allOf` as one schema, their `properties` merged.
 *
 * @param {Schema[]} parts
 * @returns {Schema}
 */
function mergeAll(parts) {
  /** @type {Schema} */
  let out = {};
  for (const p of parts) out = Object.assign({}, out, p, { properties: { ...out.properties, ...p.properties } });
  return out;
}

/**
 * @param {string} title
 * @param {Schema} schema
 */
function schemaBlock(title, schema) {
  const body = schema?.allOf ? mergeAll(schema.allOf.map(resolve)) : resolve(schema);
  const input = refName(body?.properties?.input);
  const shown =
    input && body ? { ...body, properties: { ...body.properties, input: doc.components.schemas[input] } } : body;
  return el('details', {}, [
    el('summary', { textContent: `${title}${refName(schema) ? ` (${refName(schema)})` : ''}` }),
    el('pre', { className: 'json mono', textContent: JSON.stringify(shown, null, 2) }),
  ]);
}

/**
 * @param {string} path
 * @param {string} method
 * @param {any} o the OpenAPI operation object
 */
function operation(path, method, o) {
  /** @type {string[]} */
  const params = (o.parameters ?? []).map(
    (/** @type {any} */ p) =>
      `${p.name} (${p.in}${p.required ? ', required' : ''})${p.description ? `: ${p.description}` : ''}`,
  );
  const ok = o.responses?.['200'];
  const okSchema = ok?.content?.['application/json']?.schema;
  return el('section', { className: 'op' }, [
    el('h3', {}, [
      el('span', { className: `method m-${method}`, textContent: method.toUpperCase() }),
      ' ',
      el('code', { className: 'mono', textContent: path }),
    ]),
    el('p', { textContent: `${o.summary ?? ''}${o.security && o.security.length === 0 ? ' · no key needed' : ''}` }),
    ...(params.length
      ? [
          el(
            'ul',
            { className: 'params' },
            params.map((t) => el('li', { textContent: t })),
          ),
        ]
      : []),
    ...(o.requestBody ? [schemaBlock('Request body', o.requestBody.content['application/json'].schema)] : []),
    ...(okSchema
      ? [schemaBlock('200 answer', okSchema)]
      : ok
        ? [el('p', { className: 'muted', textContent: `200: ${Object.keys(ok.content ?? {}).join(', ')}` })]
        : []),
  ]);
}

function render() {
  $('doc-info').textContent =
    `${doc.info.title} ${doc.info.version}, OpenAPI ${doc.openapi}: ${Object.keys(doc.paths).length} routes for this key.`;
  /** @type {Map<string, HTMLElement[]>} */
  const groups = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, o] of Object.entries(/** @type {Record<string, any>} */ (item))) {
      const tag = o.tags?.[0] ?? 'other';
      const ops = groups.get(tag) ?? [];
      groups.set(tag, ops);
      ops.push(operation(path, method, o));
    }
  }
  $('doc').replaceChildren(
    ...[...groups].map(([tag, ops]) =>
      el('section', { className: 'panel group' }, [el('h2', { textContent: tag }), ...ops]),
    ),
  );
  /** @type {HTMLButtonElement} */ ($('download')).disabled = false;
}

async function load() {
  if (!getKey())
    return show('page-error', 'Enter the API key (berth dev prints it), or open this page as /docs#key=<your key>.');
  try {
    doc = await api('/openapi.json');
  } catch (err) {
    $('key-status').textContent =
      err instanceof ApiError && err.status === 401 ? 'Key refused (401): paste another one.' : '';
    return show('page-error', `Could not load /openapi.json: ${errorText(err)}`);
  }
  show('page-error');
  $('key-status').textContent = 'Key accepted for this tab.';
  render();
}

takeKeyFromFragment();
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const keyField = /** @type {HTMLInputElement} */ ($('api-key'));
  setKey(keyField.value.trim());
  keyField.value = '';
  void load();
});
$('download').addEventListener('click', () => {
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: 'application/json' }));
  const a = el('a', { href: url, download: 'openapi.json' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
});
void load();
