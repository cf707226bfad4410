import { readFileSync } from 'node:fs';

/** The version of @berth/cli, read from its package.json (one level above dist/ and src/). */
export function cliVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
