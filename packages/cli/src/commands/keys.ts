import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ENDPOINT_ID_RE } from '@berth/protocol';
import type { Io } from '../internal/io.js';
import { EXIT, UsageError } from '../internal/usage-error.js';
import { redactUrl } from '../store-options.js';
import type { KeyStore } from '@berth/server';

export const KEYS_HELP = `Usage: berth keys <create|list|revoke> [options]

Manages the API keys and worker tokens stored in the data folder's database (<data-dir>/berth.sqlite),
which berth dev and berth serve (with the default --store sqlite) accept alongside BERTH_API_KEY and
BERTH_WORKER_TOKEN. Keys are shown once, at creation; only their SHA-256 is stored. Revoking takes effect at
once, also on a running server.

Commands:
  berth keys create [--name <text>] [--endpoints <id,...>] [--read-only]
                          print a new key (berth_sk_...): all endpoints and operations by default;
                          --endpoints limits it to those endpoints; --read-only to /status, /status-sync,
                          /stream, /health and the webhook log
  berth keys create --worker --endpoints <id,...> [--name <text>]
                          print a new worker token (berth_wk_...): workers holding it may serve only
                          these endpoints (set it as their BERTH_WORKER_TOKEN)
  berth keys list         id, kind (api or worker), name, scope, creation and revocation time of every
                          key and token (never the secret)
  berth keys revoke <id>  refuse the key from now on

Options:
      --data-dir <dir>    the data folder (default ./.berth, or BERTH_DATA_DIR)
      --store postgres --database-url <url> [--database-schema <name>]
                          the keys of replicas on PostgreSQL instead (or BERTH_STORE, BERTH_DATABASE_URL,
                          BERTH_DATABASE_SCHEMA)
  -h, --help              show this help
`;

type Parsed = { sub: string | undefined; rest: string[]; values: Record<string, string | boolean | undefined> };

function parse(argv: readonly string[]): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: {
        name: { type: 'string' },
        endpoints: { type: 'string' },
        'read-only': { type: 'boolean' },
        worker: { type: 'boolean' },
        endpoint: { type: 'string' },
        'data-dir': { type: 'string' },
        store: { type: 'string' },
        'database-url': { type: 'string' },
        'database-schema': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    return { sub: positionals[0], rest: positionals.slice(1), values: values as Parsed['values'] };
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err), 'keys');
  }
}

const when = (t: number | null) => (t === null ? '-' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z'));

/** `berth keys create|list|revoke`. Resolves with the exit code. */
export async function runKeys(argv: readonly string[], io: Io): Promise<number> {
  const { sub, rest, values } = parse(argv);
  if (values['help'] || sub === undefined) {
    (values['help'] ? io.stdout : io.stderr).write(KEYS_HELP);
    return values['help'] ? EXIT.ok : EXIT.usage;
  }
  if (!['create', 'list', 'revoke'].includes(sub))
    throw new UsageError(`unknown keys command "${sub}" (create, list, revoke)`, 'keys');
  const expected = sub === 'revoke' ? 1 : 0;
  if (rest.length !== expected)
    throw new UsageError(
      sub === 'revoke'
        ? 'berth keys revoke takes one key id'
        : `berth keys ${sub} takes no arguments (got "${rest.join(' ')}")`,
      'keys',
    );
  if (typeof values['endpoint'] === 'string')
    values['endpoints'] = [values['endpoints'], values['endpoint']].filter((v) => typeof v === 'string').join(',');
  if (
    sub !== 'create' &&
    (values['name'] !== undefined ||
      values['endpoints'] !== undefined ||
      values['read-only'] !== undefined ||
      values['worker'] !== undefined)
  ) {
    throw new UsageError('--name, --endpoints, --read-only and --worker go with berth keys create', 'keys');
  }
  if (values['worker'] === true && values['read-only'] === true)
    throw new UsageError('--read-only applies to API keys, not to worker tokens (--worker)', 'keys');
  if (values['worker'] === true && values['endpoints'] === undefined)
    throw new UsageError('a worker token names the endpoints its workers serve: --worker --endpoints <id,...>', 'keys');
  let endpoints: string[] | undefined;
  if (typeof values['endpoints'] === 'string') {
    endpoints = values['endpoints']
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const bad = endpoints.find((e) => !ENDPOINT_ID_RE.test(e));
    if (bad !== undefined || endpoints.length === 0)
      throw new UsageError(`--endpoints: "${bad ?? values['endpoints']}" is not a list of endpoint ids`, 'keys');
  }
  const dir = (values['data-dir'] as string | undefined) ?? io.env['BERTH_DATA_DIR'] ?? '.berth';
  if (dir.trim() === '') throw new UsageError('--data-dir must not be empty', 'keys');
  // --store postgres (or BERTH_STORE=postgres): the keys of a replica set, in its database (docs/deployment.md).
  const pg = ((values['store'] as string | undefined) ?? io.env['BERTH_STORE']) === 'postgres';
  const url = (values['database-url'] as string | undefined) ?? io.env['BERTH_DATABASE_URL'];
  if (pg && !url) throw new UsageError('--store postgres needs --database-url (or BERTH_DATABASE_URL)', 'keys');
  const schema = (values['database-schema'] as string | undefined) ?? io.env['BERTH_DATABASE_SCHEMA'] ?? 'berth';
  const file = pg ? `${redactUrl(url ?? '')} (schema ${schema})` : resolve(io.cwd, dir, 'berth.sqlite');

  const { createApiKey } = await import('@berth/server');
  // Only the chosen store's driver (an optional peer dependency of @berth/server) is loaded.
  const store = pg ? await openPgKeys(url ?? '', schema) : await openSqliteKeys(file);
  try {
    if (sub === 'create') {
      const { key, secret } = await createApiKey(store, {
        ...(typeof values['name'] === 'string' ? { name: values['name'] } : {}),
        ...(endpoints ? { endpoints } : {}),
        readOnly: values['read-only'] === true,
        worker: values['worker'] === true,
      });
      io.stdout.write(`${secret}\n`);
      const use =
        key.kind === 'worker'
          ? 'Workers of these endpoints use it as BERTH_WORKER_TOKEN.'
          : 'Clients send it as Authorization: Bearer <key>.';
      io.stderr.write(
        `Created ${key.kind === 'worker' ? 'worker token' : 'key'} ${key.id} (${scopeOf(key)}) in ${file}.\nThis is the only time the ${key.kind === 'worker' ? 'token' : 'key'} is shown: store it now. ${use}\n`,
      );
      return EXIT.ok;
    }
    if (sub === 'list') {
      const keys = await store.list();
      if (keys.length === 0) {
        io.stdout.write(`No keys in ${file}. Create one with: berth keys create --name <text>\n`);
        return EXIT.ok;
      }
      const rows = [
        ['ID', 'KIND', 'NAME', 'SCOPE', 'CREATED', 'REVOKED'],
        ...keys.map((k) => [k.id, k.kind, k.name || '-', scopeOf(k), when(k.createdAt), when(k.revokedAt)]),
      ];
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows)
        io.stdout.write(
          `${r
            .map((c, i) => c.padEnd(widths[i]!))
            .join('  ')
            .trimEnd()}\n`,
        );
      return EXIT.ok;
    }
    const id = rest[0]!;
    if (await store.revoke(id, Date.now())) {
      io.stdout.write(`Revoked key ${id}.\n`);
      return EXIT.ok;
    }
    const k = await store.get(id);
    io.stderr.write(
      k
        ? `berth: key ${id} was already revoked (${when(k.revokedAt)})\n`
        : `berth: no key ${id} in ${file} (see berth keys list)\n`,
    );
    return EXIT.failure;
  } finally {
    await store.close();
  }
}

function scopeOf(k: { endpoints: string[] | null; readOnly: boolean }): string {
  const where = k.endpoints === null ? 'all endpoints' : k.endpoints.join(',');
  return k.readOnly ? `${where}, read-only` : where;
}

async function openPgKeys(url: string, schema: string): Promise<KeyStore> {
  const { PgKeyStore } = await import('@berth/server/postgres');
  return PgKeyStore.open({ url, schema });
}

async function openSqliteKeys(file: string): Promise<KeyStore> {
  const { SqliteKeyStore } = await import('@berth/server/sqlite');
  return new SqliteKeyStore(file);
}
