import { UnrecoverableError } from '@berth/worker';
import type { z } from 'zod';

/**
 * Bad job input. Fails the job (without retry) with `invalid_input: <field>: <problem>; ...`; the prefix is the
 * stable code clients can match on.
 */
export class InputError extends UnrecoverableError {
  readonly code = 'invalid_input';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid_input: ${problems.join('; ')}`);
    this.name = 'InputError';
    this.problems = problems;
  }
}

/**
 * Parses `value` with `schema`, throwing `InputError` naming every bad field. A `null` field counts as absent (as
 * the control plane's public-model validation treats it).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const cleaned =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null))
      : value;
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new InputError(
    parsed.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys')
        return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${issue.path.map(String).join('.') || 'input'}: ${issue.message}`;
    }),
  );
}
