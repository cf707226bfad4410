import { parseArgs } from 'node:util';
import { TEMPLATES } from './templates.js';

export const HELP = `Usage: create-worker [<dir>] [--template <name>] [--no-install] [--local <repo>] [--force]

Creates a Berth worker project in <dir>: a handler, a passing test, test_input.json, berth.config.json and
the scripts dev (berth dev), test (vitest) and build (berth build). Asks for what is missing when run in a
terminal; otherwise uses the defaults.

Options:
  -t, --template <name>   ${TEMPLATES.map((t) => t.name).join(', ')} (default ${TEMPLATES[0]?.name})
${TEMPLATES.map((t) => `                            ${t.name.padEnd(6)} ${t.description}`).join('\n')}
      --no-install        do not run npm install
      --local <repo>      depend on the Berth packages of a local checkout (packed into vendor/*.tgz)
                          instead of the published ones; also BERTH_LOCAL_REPO
  -f, --force             write into <dir> even if it is not empty
  -h, --help              show this help

Default <dir>: berth-worker
`;

export interface Args {
  help: boolean;
  dir: string | undefined;
  template: string | undefined;
  install: boolean;
  local: string | undefined;
  force: boolean;
}

/**
 * A bad flag or value: printed with a pointer to --help, exit code 2. The same concept as `UsageError` in
 * `@berth/cli`, kept here because create-worker has no dependencies (`npx create-worker` fetches one package).
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv): Args {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        template: { type: 'string', short: 't' },
        'no-install': { type: 'boolean' },
        local: { type: 'string' },
        force: { type: 'boolean', short: 'f' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const { values: v, positionals } = parsed;
  if (positionals.length > 1) throw new UsageError(`one folder at most (got ${positionals.join(' ')})`);
  if (v.template !== undefined && !TEMPLATES.some((t) => t.name === v.template)) {
    throw new UsageError(`unknown template "${v.template}" (templates: ${TEMPLATES.map((t) => t.name).join(', ')})`);
  }
  const local = v.local ?? (env['BERTH_LOCAL_REPO'] || undefined);
  return {
    help: v.help === true,
    dir: positionals[0],
    template: v.template,
    install: v['no-install'] !== true,
    local,
    force: v.force === true,
  };
}
