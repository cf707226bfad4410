import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { sampleFromSchema } from './schema-sample.js';

/** The request body the banner's curl lines send, and where it came from. */
export interface SampleRequest {
  /** A compact JSON body (`{"input":{...}}`), or `@<file>` for curl to read a large one. */
  body: string;
  /** The test_input.json it came from; undefined for the generic example. */
  file?: string;
  /** Where a body not from a file came from (the banner's comment), e.g. the announced input schema. */
  note?: string;
}

/** Above this many characters the curl line reads the file (`-d @file`) instead of carrying the JSON. */
const INLINE_MAX = 400;

/** Folders to look in: the handler's, those above it inside the config folder, and the config folder. */
function candidates(workerFile: string, configDir: string): string[] {
  const top = resolve(configDir);
  const dirs: string[] = [];
  for (let dir = dirname(resolve(workerFile)); ; dir = dirname(dir)) {
    dirs.push(dir);
    if (dir === top || relative(top, dir).startsWith('..') || dirname(dir) === dir) break;
  }
  return dirs.includes(top) ? dirs : [...dirs, top];
}

/**
 * The endpoint's test_input.json as a curl body: the one next to the handler, else in a folder above it up to
 * the config folder (where create-worker puts it; the worker's current directory under berth dev), as `berth
 * test` and `--test-input` find it. Without one (or with one that is not `{"input": ...}`), the generic
 * `{"input":{"hello":"world"}}`, which an endpoint with an input schema may refuse.
 */
export function sampleRequest(workerFile: string, configDir: string): SampleRequest {
  const file = candidates(workerFile, configDir)
    .map((d) => join(d, 'test_input.json'))
    .find((f) => existsSync(f));
  if (file) {
    try {
      const json = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      if (json && typeof json === 'object' && !Array.isArray(json) && 'input' in json) {
        const body = JSON.stringify(json);
        return { body: body.length > INLINE_MAX ? `@${file}` : body, file };
      }
    } catch {
      // not JSON: the generic example (berth test reports the file's error)
    }
  }
  return { body: JSON.stringify({ input: { hello: 'world' } }) };
}

/**
 * The curl body for an endpoint without a test_input.json whose worker announced `schema`: a sample built from
 * it (`sampleFromSchema`), naming the fields to fill in when a pattern or format is beyond a plain value;
 * undefined without a usable schema.
 */
export function schemaRequest(endpoint: string, schema: unknown): SampleRequest | undefined {
  const built = sampleFromSchema(schema);
  if (!built) return undefined;
  const body = JSON.stringify({ input: built.input });
  const fill = built.toFill.length ? `; fill in ${built.toFill.join(', ')}` : '';
  return {
    body: body.length > INLINE_MAX ? JSON.stringify({ input: {} }) : body,
    note: ` (input built from the schema ${endpoint}'s worker announced${body.length > INLINE_MAX ? ': too large to show, see the playground' : fill})`,
  };
}
