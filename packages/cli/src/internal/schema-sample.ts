/**
 * A sample input built from the JSON Schema an endpoint's worker announced (`inputSchema` in its hello, as zod 4's
 * `z.toJSONSchema` writes it): for the banner's curl lines when the endpoint has no test_input.json. Each field
 * gets the value the playground's form starts with when it has one (its `default`, the first `enum` value), else
 * the first `examples` entry, else a plain value within its bounds. Required fields only: the worker fills in
 * defaults. `toFill` names the fields no plain value can satisfy (a `pattern`, a `format`), for the user to edit.
 */
export interface SchemaSample {
  input: Record<string, unknown>;
  /** Dotted paths of fields whose sample value probably does not pass (a pattern or format to match). */
  toFill: string[];
}

type Schema = Record<string, unknown>;
const isObj = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Math.abs(v) < Number.MAX_SAFE_INTEGER ? v : undefined;

/** `anyOf: [X, {type: 'null'}]` (zod's nullable) to X; several alternatives to the first that is not null. */
function plain(s: Schema): Schema {
  const alts = s['anyOf'] ?? s['oneOf'];
  if (!Array.isArray(alts)) return s;
  const real = alts.filter((a) => isObj(a) && a['type'] !== 'null');
  const { anyOf: _a, oneOf: _o, ...rest } = s;
  return isObj(real[0]) ? { ...rest, ...plain(real[0]) } : rest;
}

function typeOf(s: Schema): string | undefined {
  const t = s['type'];
  return Array.isArray(t) ? (t.find((x) => x !== 'null') as string | undefined) : (t as string | undefined);
}

function numberIn(s: Schema, integer: boolean): number {
  const step = num(s['multipleOf']) ?? (integer ? 1 : undefined);
  const exMin = num(s['exclusiveMinimum']);
  let v = num(s['minimum']) ?? (exMin !== undefined ? exMin + (step ?? 1) : 1);
  if (step) v = Math.ceil(v / step) * step;
  const max = num(s['maximum']) ?? num(s['exclusiveMaximum']);
  if (max !== undefined && v > max) v = num(s['minimum']) ?? max;
  return v;
}

function stringIn(s: Schema): string {
  const min = num(s['minLength']) ?? 0;
  const max = num(s['maxLength']);
  let v = 'hello';
  if (v.length < min) v = v.padEnd(min, '!');
  if (max !== undefined) v = v.slice(0, max);
  return v;
}

function sample(raw: unknown, path: string, toFill: string[]): unknown {
  if (!isObj(raw)) return {};
  const s = plain(raw);
  if ('default' in s) return s['default'];
  if ('const' in s) return s['const'];
  if (Array.isArray(s['enum']) && s['enum'].length) return s['enum'][0];
  if (Array.isArray(s['examples']) && s['examples'].length) return s['examples'][0];
  switch (typeOf(s)) {
    case 'string':
      if (s['pattern'] !== undefined || s['format'] !== undefined) toFill.push(path);
      return stringIn(s);
    case 'integer':
      return numberIn(s, true);
    case 'number':
      return numberIn(s, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const n = num(s['minItems']) ?? 0;
      return Array.from({ length: n }, (_, i) => sample(s['items'], `${path}[${i}]`, toFill));
    }
    default: {
      const props = isObj(s['properties']) ? s['properties'] : {};
      const required = Array.isArray(s['required']) ? (s['required'] as string[]) : [];
      const out: Record<string, unknown> = {};
      for (const name of required) {
        const p = props[name];
        // zod lists defaulted fields as required: the worker fills in the default.
        if (isObj(p) && 'default' in plain(p)) continue;
        out[name] = sample(p, path ? `${path}.${name}` : name, toFill);
      }
      return out;
    }
  }
}

/** A sample input for `schema`, or undefined when it does not describe an object. */
export function sampleFromSchema(schema: unknown): SchemaSample | undefined {
  if (!isObj(schema)) return undefined;
  const s = plain(schema);
  if (typeOf(s) !== 'object' && !isObj(s['properties'])) return undefined;
  const toFill: string[] = [];
  const input = sample(s, '', toFill);
  return isObj(input) ? { input, toFill } : undefined;
}
