import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ApiRequest, ApiResponse } from '../http/types.js';

/**
 * The playground's static files (`packages/server/playground/`): same path from `src/` under tsx and from `dist/`.
 * Only files directly in that folder whose names match {@link FILE_NAME} are ever served.
 */
export const PLAYGROUND_DIR = fileURLToPath(new URL('../../playground/', import.meta.url));

/** Names the playground may serve: one lower-case segment with a known extension (no dots, slashes or `..`). */
export const FILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}\.(html|js|css|svg|png|ico)$/;

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
};

/** The page's Content-Security-Policy: scripts, styles and API calls from this origin only; media from anywhere. */
export const PLAYGROUND_CSP =
  "default-src 'self'; img-src 'self' data: blob: http: https:; media-src 'self' blob: http: https:; connect-src 'self'; style-src 'self'; script-src 'self'";

interface StaticFile {
  bytes: Uint8Array;
  type: string;
}

let files: Map<string, StaticFile> | undefined;

/** Reads the allow-listed files once (they ship with the package and do not change while it runs). */
function load(): Map<string, StaticFile> {
  if (files) return files;
  const found = new Map<string, StaticFile>();
  let names: string[] = [];
  try {
    names = readdirSync(PLAYGROUND_DIR);
  } catch {
    // No playground folder (a trimmed install): nothing is served.
  }
  for (const name of names) {
    const ext = FILE_NAME.exec(name)?.[1];
    const type = ext === undefined ? undefined : CONTENT_TYPES[ext];
    if (type) found.set(name, { bytes: readFileSync(PLAYGROUND_DIR + name), type });
  }
  files = found;
  return found;
}

/**
 * Answers `GET /` (the playground page), `GET /docs` (the API reference page) and `GET /playground/<file>` (its scripts and styles); `undefined` for
 * every other request, so the API answers it. The page carries no key: it reads one from `#key=` or asks for it.
 *
 * @example
 * const res = servePlayground({ method: 'GET', path: '/', query: new URLSearchParams(), headers: {} });
 * // { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', ... }, bytes }
 */
export function servePlayground(req: ApiRequest): ApiResponse | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  let name: string | undefined;
  if (req.path === '/') name = 'index.html';
  else if (req.path === '/docs')
    name = 'api.html'; // the API reference, as RunPod's local server, Cog and BentoML have it
  else if (req.path.startsWith('/playground/')) name = req.path.slice('/playground/'.length);
  else return undefined;
  const file = FILE_NAME.test(name) ? load().get(name) : undefined;
  if (!file)
    return {
      status: 404,
      json: { error: `no playground file ${JSON.stringify(name.slice(0, 80))}`, code: 'route_not_found' },
    };
  return {
    status: 200,
    headers: {
      'content-type': file.type,
      'cache-control': 'no-cache',
      'content-security-policy': PLAYGROUND_CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    },
    bytes: file.bytes,
  };
}
