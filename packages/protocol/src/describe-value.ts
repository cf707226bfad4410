/**
 * A bad value as error messages quote it: strings JSON-quoted (cut at 40 characters), numbers and booleans as
 * written, other values by kind. Used by every "must be ... (got X)" message of options, config files and
 * request parameters.
 *
 * @example `concurrency must be a whole number (got ${describeValue('four')})` // ... (got "four")
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}
