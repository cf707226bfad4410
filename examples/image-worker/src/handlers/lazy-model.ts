import type { Job } from '@berth/worker';

/**
 * Loads a model on first use, once, shared by every job; a load that fails is forgotten, so the next job tries
 * again instead of failing forever.
 *
 * @example const getModel = lazyModel((log) => loadDiffusionModel(dir, log)); const m = await getModel(job.log);
 */
export function lazyModel<M>(load: (log: Job<unknown>['log']) => Promise<M>): (log: Job<unknown>['log']) => Promise<M> {
  let model: Promise<M> | undefined;
  return (log) => {
    if (!model) {
      model = load(log);
      model.catch(() => (model = undefined));
    }
    return model;
  };
}
