/** The GPUs one worker holds. */
export interface GpuHolding {
  workerId: string;
  /** Device ids as the box names them (`nvidia-smi -L`'s indexes, or the config's `gpus.devices`). */
  devices: readonly string[];
}

/**
 * The box's GPUs, handed out per worker: each worker that needs GPUs (`gpusPerWorker`) gets its own devices,
 * disjoint from every other worker's (of any endpoint), and gives them back when it has stopped. The pools take
 * (`take`, when they start a worker; `claim`, for a worker found running) and release (when its process or
 * container is gone); the scale loop starts no worker whose devices are not free (it waits, and says `gpu`).
 * `onChange(endpointId)` is called after each change of an endpoint's holdings (what `/health` shows).
 */
export class GpuAllocator {
  readonly devices: readonly string[];
  /** Device -> its holder. */
  readonly #holder = new Map<string, { endpointId: string; workerId: string }>();
  readonly #onChange: ((endpointId: string) => void) | undefined;

  constructor(devices: readonly string[], onChange?: (endpointId: string) => void) {
    const seen = new Set<string>();
    for (const d of devices) {
      if (seen.has(d)) throw new Error(`GPU device "${d}" is listed twice`);
      seen.add(d);
    }
    this.devices = [...devices];
    this.#onChange = onChange;
  }

  /** How many devices no worker holds. */
  freeCount(): number {
    return this.devices.length - this.#holder.size;
  }

  /**
   * Takes `n` free devices (the first free ones in inventory order) for a new worker; `undefined` when fewer
   * than `n` are free (nothing is taken). A worker that already holds devices keeps them (returned as they are).
   */
  take(endpointId: string, workerId: string, n: number): readonly string[] | undefined {
    const had = this.heldBy(workerId);
    if (had.length > 0) return had;
    if (n <= 0) return [];
    const free = this.devices.filter((d) => !this.#holder.has(d));
    if (free.length < n) return undefined;
    const got = free.slice(0, n);
    for (const d of got) this.#holder.set(d, { endpointId, workerId });
    this.#onChange?.(endpointId);
    return got;
  }

  /**
   * A worker found running with these devices (a container adopted at start): they are its. Returns the devices
   * it could not have: held by another worker, or not in the inventory.
   */
  claim(endpointId: string, workerId: string, devices: readonly string[]): string[] {
    const refused: string[] = [];
    for (const d of devices) {
      const h = this.#holder.get(d);
      if (!this.devices.includes(d) || (h !== undefined && h.workerId !== workerId)) refused.push(d);
      else this.#holder.set(d, { endpointId, workerId });
    }
    if (refused.length < devices.length) this.#onChange?.(endpointId);
    return refused;
  }

  /** The worker has stopped: its devices are free again. */
  release(workerId: string): void {
    const eps = new Set<string>();
    for (const [d, h] of this.#holder)
      if (h.workerId === workerId) {
        this.#holder.delete(d);
        eps.add(h.endpointId);
      }
    for (const ep of eps) this.#onChange?.(ep);
  }

  /** The devices a worker holds (empty: none), in inventory order. */
  heldBy(workerId: string): readonly string[] {
    return this.devices.filter((d) => this.#holder.get(d)?.workerId === workerId);
  }

  /** Workers holding devices: of one endpoint, or of every endpoint when omitted; by worker id. */
  holdings(endpointId?: string): GpuHolding[] {
    const by = new Map<string, string[]>();
    for (const d of this.devices) {
      const h = this.#holder.get(d);
      if (!h || (endpointId !== undefined && h.endpointId !== endpointId)) continue;
      let list = by.get(h.workerId);
      if (!list) by.set(h.workerId, (list = []));
      list.push(d);
    }
    return [...by]
      .map(([workerId, devices]) => ({ workerId, devices }))
      .sort((a, b) => (a.workerId < b.workerId ? -1 : 1));
  }
}
