import type { HealthReply } from '@berth/protocol';

/**
 * The batches that batch handlers (`start({ batch })`, docs/batching.md) started, per endpoint, as their workers
 * report them (`batch` messages), since this process started: `/health` shows the totals, `onBatch` feeds the
 * `berth_batch_size` histogram of `/metrics`.
 */
export class BatchStats {
  private readonly byEndpoint = new Map<string, { batches: number; jobs: number }>();

  constructor(private readonly onBatch: (endpointId: string, size: number) => void = () => undefined) {}

  /** A worker of `endpointId` started a batch of `size` jobs. */
  observe(endpointId: string, size: number): void {
    let s = this.byEndpoint.get(endpointId);
    if (!s) this.byEndpoint.set(endpointId, (s = { batches: 0, jobs: 0 }));
    s.batches++;
    s.jobs += size;
    this.onBatch(endpointId, size);
  }

  /**
   * `/health`'s `batch` field: present once a batch worker connected or reported here. `maxSize`: the largest
   * `batch.maxSize` the endpoint's connected workers announce (0 when none is connected).
   */
  health(endpointId: string, maxSize: number): HealthReply['batch'] {
    const s = this.byEndpoint.get(endpointId);
    if (!s && maxSize === 0) return undefined;
    const batches = s?.batches ?? 0;
    const jobs = s?.jobs ?? 0;
    return { maxSize, batches, jobs, meanSize: batches === 0 ? 0 : Math.round((jobs / batches) * 100) / 100 };
  }
}
