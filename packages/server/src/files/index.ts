import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol/log';
import type { Store } from '../store/types.js';
import { createFileRoutes, type FileRoutes, type FileRoutesDeps } from './file-routes.js';
import { FileStore } from './file-store.js';
import type { OutputFileStore } from '../store/output-files.js';
import { UrlSigner } from './url-signer.js';

export { FileStore, type FileMeta } from './file-store.js';
export type { OutputFileStore } from '../store/output-files.js';
export { UrlSigner } from './url-signer.js';
export type { FileRoutes } from './file-routes.js';

/** Output URLs (and the files behind them) live 7 days. */
export const FILE_TTL_MS = 7 * 24 * 3600_000;

export interface OutputFiles {
  /** Worker uploads and signed downloads (the route table's `/v2/_worker/files/...` and `/files/...`). */
  routes: FileRoutes;
  /** Deletes expired files; returns how many. */
  sweep(): Promise<number>;
  /** A database-backed store may close asynchronously. */
  close(): void | Promise<void>;
  readonly store: OutputFileStore;
}

/** The control plane's file storage for worker outputs (used when the worker has no S3 bucket). */
export function createOutputFiles(o: {
  dir: string | undefined;
  secret: string | undefined;
  maxBytes: number;
  publicUrl: string | undefined;
  authorize: FileRoutesDeps['authorize'];
  store: Store;
  clock: Clock;
  logger: Logger;
}): OutputFiles {
  // A store that shares files between processes (PostgreSQL) keeps them; otherwise the control plane's folder.
  const fileOpts = { ttlMs: FILE_TTL_MS, clock: o.clock, logger: o.logger };
  const files = o.store.outputFiles?.(fileOpts) ?? new FileStore({ dir: o.dir, ...fileOpts });
  let signer: Promise<UrlSigner> | undefined;
  const sign = () =>
    (signer ??= (o.secret !== undefined ? Promise.resolve(o.secret) : files.secret())
      .then((s) => new UrlSigner(s))
      .catch((err: unknown) => {
        signer = undefined;
        throw err;
      }));
  const routes = createFileRoutes({
    files,
    signer: sign,
    authorize: o.authorize,
    store: o.store,
    clock: o.clock,
    logger: o.logger,
    maxBytes: o.maxBytes,
    publicUrl: o.publicUrl,
  });
  return { routes, sweep: () => files.sweep(), close: () => files.close(), store: files };
}
