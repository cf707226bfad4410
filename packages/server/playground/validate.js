// @ts-check
// Checks an input against the JSON Schema the form was built from, before anything is sent: required fields,
// string lengths, number ranges, whole numbers, enums. Only what the form can show; the API checks the rest.

/**
 * A JSON Schema as the form reads it (draft 2020-12, from zod 4's z.toJSONSchema): any keyword may be missing.
 *
 * @typedef {Record<string, any>} JsonSchema
 */

/** @typedef {{ name: string, message: string }} Problem */

/** @param {unknown} v */
const real = (v) => (typeof v === 'number' && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined);

/**
 * Drops `anyOf: [X, {type: 'null'}]` (zod's optional/nullable) to the one real alternative.
 *
 * @param {JsonSchema | undefined} schema
 * @returns {JsonSchema}
 */
function plain(schema) {
  const alts = schema?.anyOf ?? schema?.oneOf;
  if (Array.isArray(alts)) {
    const notNull = alts.filter((/** @type {JsonSchema | undefined} */ s) => s?.type !== 'null');
    if (notNull.length === 1) return { ...schema, ...notNull[0] };
  }
  return schema ?? {};
}

/**
 * The problem with one value, or undefined.
 *
 * @param {JsonSchema} s
 * @param {unknown} v
 * @returns {string | undefined}
 */
function check(s, v) {
  const type = Array.isArray(s.type) ? s.type.find((/** @type {unknown} */ t) => t !== 'null') : s.type;
  if (Array.isArray(s.enum) && !s.enum.includes(v))
    return `must be one of ${s.enum.map((/** @type {unknown} */ e) => JSON.stringify(e)).join(', ')}`;
  if (type === 'string') {
    if (typeof v !== 'string') return 'must be text';
    if (s.minLength !== undefined && v.length < s.minLength)
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`;
    if (s.maxLength !== undefined && v.length > s.maxLength) return `must be at most ${s.maxLength} characters`;
  }
  if (type === 'number' || type === 'integer') {
    if (typeof v !== 'number' || Number.isNaN(v)) return 'must be a number';
    if (type === 'integer' && !Number.isInteger(v)) return 'must be a whole number';
    const min = real(s.minimum);
    const max = real(s.maximum);
    if (min !== undefined && v < min) return `must be at least ${min}`;
    if (max !== undefined && v > max) return `must be at most ${max}`;
    if (real(s.exclusiveMinimum) !== undefined && v <= s.exclusiveMinimum)
      return `must be more than ${s.exclusiveMinimum}`;
    if (real(s.exclusiveMaximum) !== undefined && v >= s.exclusiveMaximum)
      return `must be less than ${s.exclusiveMaximum}`;
  }
  if (type === 'boolean' && typeof v !== 'boolean') return 'must be true or false';
  return undefined;
}

/**
 * The problems of `input` under `schema` (an object schema), as `[{name, message}]`; empty when it looks valid.
 * A required field left empty is "is required"; `null` for an optional field counts as left out.
 *
 * @param {JsonSchema | undefined} schema
 * @param {unknown} input
 * @returns {Problem[]}
 */
export function validateInput(schema, input) {
  const s = plain(schema);
  if (!s || typeof s.properties !== 'object' || !input || typeof input !== 'object') return [];
  const required = new Set(Array.isArray(s.required) ? s.required : []);
  /** @type {Problem[]} */
  const problems = [];
  for (const [name, raw] of Object.entries(s.properties)) {
    const v = /** @type {Record<string, unknown>} */ (input)[name];
    const p = plain(raw);
    if (v === undefined || v === null || (v === '' && p.type === 'string')) {
      // zod lists defaulted fields as required: a default fills them in.
      if (required.has(name) && p.default === undefined) problems.push({ name, message: 'is required' });
      continue;
    }
    const message = check(p, v);
    if (message) problems.push({ name, message });
  }
  return problems;
}

/**
 * "prompt: is required; width: must be at most 128"
 *
 * @param {Problem[]} problems
 */
export const problemText = (problems) => problems.map((p) => `${p.name}: ${p.message}`).join('; ');
