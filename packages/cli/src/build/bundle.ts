import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

/**
 * Packages never bundled: native addons (`.node` binaries built or downloaded for the target machine) and
 * packages that load their own files at run time. The bundle imports them and the deployable folder's
 * package.json declares them, at the version installed in the project.
 */
export const NATIVE_PACKAGES = [
  'onnxruntime-node',
  'onnxruntime-web',
  '@huggingface/transformers',
  'sharp',
  'better-sqlite3',
] as const;

/** Optional native speed-ups that `ws` tries to load and works without. Kept external, not declared. */
const OPTIONAL_PACKAGES = ['bufferutil', 'utf-8-validate'];

/**
 * Optional peer dependencies (the AWS SDK for `@berth/worker/s3`, the OpenTelemetry SDK for tracing): bundled when
 * the project has them installed, else kept external so the bundle builds and using them fails with a clear error.
 */
const OPTIONAL_PEERS = [
  '@aws-sdk/client-s3',
  '@aws-sdk/s3-request-presigner',
  // The OpenTelemetry SDK (`@berth/protocol`'s tracing, loaded only with OTEL_EXPORTER_OTLP_ENDPOINT set).
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-http',
  // OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (docs/observability.md).
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/resources',
];

export interface BundleResult {
  /** Bytes written to `outfile`. */
  bytes: number;
  /** External packages the bundle imports, with the version installed in the project (`*` when not found). */
  dependencies: Record<string, string>;
}

/**
 * Bundles a handler and everything it imports (`@berth/worker` included) into one ESM file for Node 20,
 * except `NATIVE_PACKAGES` and `extraExternal`.
 *
 * @example await bundleWorker({ entry: '/app/handler.ts', outfile: '/app/build/echo/worker.mjs', cwd: '/app' })
 */
export async function bundleWorker(o: {
  entry: string;
  outfile: string;
  cwd: string;
  extraExternal?: readonly string[];
}): Promise<BundleResult> {
  const external = [...NATIVE_PACKAGES, ...(o.extraExternal ?? [])];
  const absentPeers = OPTIONAL_PEERS.filter((name) => installedVersion(name, dirname(o.entry)) === undefined);
  const result = await build({
    entryPoints: [o.entry],
    absWorkingDir: o.cwd,
    outfile: o.outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minifySyntax: true,
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'silent',
    external: [...external, ...external.map((p) => `${p}/*`), ...OPTIONAL_PACKAGES, ...absentPeers],
    // Bundled CommonJS packages (ws, ...) call require(): give the ESM bundle one.
    banner: {
      js: "import { createRequire as __berthCreateRequire } from 'node:module';\nconst require = __berthCreateRequire(import.meta.url);",
    },
  });
  const output = Object.entries(result.metafile.outputs).find(
    ([path]) => path.endsWith('.mjs') || path.endsWith('.js'),
  );
  const imported = new Set<string>();
  for (const imp of output?.[1].imports ?? []) {
    if (!imp.external) continue;
    const name = packageName(imp.path);
    if (name && (external as string[]).includes(name)) imported.add(name);
  }
  const dependencies: Record<string, string> = {};
  for (const name of [...imported].sort()) dependencies[name] = installedVersion(name, dirname(o.entry)) ?? '*';
  return { bytes: output?.[1].bytes ?? 0, dependencies };
}

/** `@scope/pkg/sub` -> `@scope/pkg`; `pkg/sub` -> `pkg`; `node:fs` and relative paths -> undefined. */
export function packageName(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The version of `name` found in node_modules from `dir` upwards, as Node would resolve it. */
export function installedVersion(name: string, dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const file = join(d, 'node_modules', name, 'package.json');
    if (existsSync(file)) {
      const version = (JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version;
      return typeof version === 'string' ? version : undefined;
    }
    if (dirname(d) === d) return undefined;
  }
}
