/** A JSON-like value a manifest holds. */
type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/**
 * Block-style YAML of a plain value (objects, arrays, strings, numbers, booleans): what Kubernetes manifests need,
 * without a YAML library. Strings are always double-quoted (JSON escapes are valid YAML), so no value is read back
 * as another type.
 */
export function toYaml(value: Value, indent = 0): string {
  return `${lines(value, indent).join('\n')}\n`;
}

function scalar(v: Value): string | undefined {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.length === 0) return '[]';
  if (!Array.isArray(v) && Object.keys(v).length === 0) return '{}';
  return undefined;
}

function lines(value: Value, indent: number): string[] {
  const pad = ' '.repeat(indent);
  const s = scalar(value);
  if (s !== undefined) return [`${pad}${s}`];
  const out: string[] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      const inner = scalar(item);
      if (inner !== undefined) out.push(`${pad}- ${inner}`);
      else {
        const [first, ...rest] = lines(item, indent + 2);
        out.push(`${pad}- ${first!.slice(indent + 2)}`, ...rest);
      }
    }
    return out;
  }
  for (const [k, v] of Object.entries(value as Record<string, Value>)) {
    const key = /^[A-Za-z0-9_./-]+$/.test(k) ? k : JSON.stringify(k);
    const inner = scalar(v);
    if (inner !== undefined) out.push(`${pad}${key}: ${inner}`);
    else out.push(`${pad}${key}:`, ...lines(v, indent + 2));
  }
  return out;
}

export type { Value as YamlValue };
