import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import { HELP, parseCliArgs, UsageError } from './args.js';
import { copyTemplate, endpointIdFrom, packageNameFrom, rewriteConfig, rewritePackageJson } from './files.js';
import { localVersions, packLocal } from './local.js';
import { readme, run } from './readme.js';
import { httpReadme } from './readme-http.js';
import { TEMPLATES, type Template } from './templates.js';

export { TEMPLATES } from './templates.js';
export { endpointIdFrom } from './files.js';

/** What `main` reads and writes; the process by default, replaceable in tests. */
export interface CreateIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const DEFAULT_DIR = 'berth-worker';

/**
 * `create-worker [<dir>] [--template <name>] [--no-install] [--local <repo>] [--force]`. Resolves with the exit
 * code: 0 created, 1 failed (install, pack), 2 bad usage.
 */
export async function main(argv: readonly string[], io: CreateIo = processIo()): Promise<number> {
  try {
    return await create(argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`create-worker: ${err.message}\nRun \`create-worker --help\` for usage.\n`);
      return 2;
    }
    io.stderr.write(`create-worker: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function create(argv: readonly string[], io: CreateIo): Promise<number> {
  const args = parseCliArgs(argv, io.env);
  if (args.help) {
    io.stdout.write(HELP);
    return 0;
  }
  const interactive = io.stdin.isTTY === true;

  // 1. Where: the folder (asked when interactive and not given), which must be empty unless --force.
  let dirArg = args.dir;
  if (dirArg === undefined && interactive) dirArg = (await ask(io, `Project folder (${DEFAULT_DIR}): `)) || DEFAULT_DIR;
  const dir = resolve(io.cwd, dirArg ?? DEFAULT_DIR);
  if (existsSync(dir) && readdirSync(dir).length > 0 && !args.force) {
    throw new UsageError(`${dir} is not empty; choose another folder or pass --force`);
  }
  const name = packageNameFrom(basename(dir));
  const endpointId = endpointIdFrom(basename(dir));

  // 2. Which template (asked when interactive and not given).
  const template =
    args.template !== undefined ? findTemplate(args.template) : interactive ? await pickTemplate(io) : TEMPLATES[0]!;

  // 3. Copy it, renaming _gitignore; name the package and the endpoint after the folder.
  const source = templatesRoot(template.name);
  const files = copyTemplate(source, dir);
  const local = args.local !== undefined ? packLocal(args.local, dir) : undefined;
  if (args.local !== undefined)
    io.stdout.write(`Packed ${localVersions(args.local).join(', ')} from ${resolve(args.local)} into vendor/\n`);
  rewritePackageJson(dir, name, template.allowScripts, local);
  rewriteConfig(dir, endpointId);
  const pm = packageManager(io.env);

  // 4. README with the next steps.
  const input = { name, endpointId, template, pm, local: local !== undefined };
  writeFileSync(join(dir, 'README.md'), template.kind === 'http' ? httpReadme(input) : readme(input));
  io.stdout.write(
    `Created ${name} (template ${template.name}, endpoint ${endpointId}) in ${dir}:\n${[...files, 'README.md'].map((f) => `  ${f}`).join('\n')}\n`,
  );

  // 5. Install, unless --no-install.
  if (args.install) {
    io.stdout.write(`\nInstalling dependencies with ${pm} (this can take a minute)...\n`);
    const code = await install(pm, dir, { ...io.env, ...template.installEnv }, io);
    if (code !== 0) {
      io.stderr.write(
        `create-worker: ${pm} install failed (exit code ${code}); the project is in ${dir}, run \`${pm} install\` there to retry\n`,
      );
      return 1;
    }
  }

  // 6. What next.
  const cd = relative(io.cwd, dir) || '.';
  const steps = [`cd ${cd}`, ...(args.install ? [] : [`${pm} install`]), run(pm, 'test'), run(pm, 'dev')];
  io.stdout.write(
    `\nDone. Next:\n${steps.map((s) => `  ${s}`).join('\n')}\n${template.notes.map((n) => `Note: ${n}\n`).join('')}`,
  );
  return 0;
}

function findTemplate(name: string): Template {
  const t = TEMPLATES.find((x) => x.name === name);
  if (!t) throw new UsageError(`unknown template "${name}"`);
  return t;
}

/** The template folder: the published package's copy, else the repository's top-level templates/. */
export function templatesRoot(name: string): string {
  for (const base of ['../templates/', '../../../templates/']) {
    const dir = fileURLToPath(new URL(`${base}${name}`, import.meta.url));
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  throw new Error(
    `template ${name} not found next to create-worker (looked in its templates/ folder and the repository's)`,
  );
}

async function pickTemplate(io: CreateIo): Promise<Template> {
  io.stdout.write(
    `Templates:\n${TEMPLATES.map((t, i) => `  ${i + 1}. ${t.name.padEnd(6)} ${t.description}`).join('\n')}\n`,
  );
  for (;;) {
    const answer = (await ask(io, `Template [1-${TEMPLATES.length} or name] (1): `)) || '1';
    const t = TEMPLATES[Number(answer) - 1] ?? TEMPLATES.find((x) => x.name === answer);
    if (t) return t;
    io.stdout.write(`No template "${answer}".\n`);
  }
}

async function ask(io: CreateIo, question: string): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: io.stdout });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

/** The package manager that ran us (`npm_config_user_agent`), npm by default. */
export function packageManager(env: NodeJS.ProcessEnv): string {
  const agent = env['npm_config_user_agent'] ?? '';
  for (const pm of ['pnpm', 'yarn', 'bun']) if (agent.startsWith(`${pm}/`)) return pm;
  return 'npm';
}

function install(pm: string, dir: string, env: NodeJS.ProcessEnv, io: CreateIo): Promise<number> {
  const args = pm === 'npm' ? ['install', '--no-audit', '--no-fund', '--prefer-offline'] : ['install'];
  return new Promise((res) => {
    const child = spawn(pm, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => io.stdout.write(d));
    child.stderr.on('data', (d: Buffer) => io.stderr.write(d));
    child.once('error', (err) => {
      io.stderr.write(`create-worker: cannot run ${pm}: ${err.message}\n`);
      res(1);
    });
    child.once('close', (code) => res(code ?? 1));
  });
}

function processIo(): CreateIo {
  return { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
}
