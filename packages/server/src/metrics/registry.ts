import { Histogram } from './histogram.js';

/** One sample of a family: its label values (in the family's label order) and its value. */
export interface Sample {
  labels: readonly string[];
  value: number;
}

type Kind = 'counter' | 'gauge' | 'histogram';

interface FamilyDef {
  name: string;
  help: string;
  labels: readonly string[];
  /**
   * Counted by this process (HTTP, process figures, time histograms): with several replicas each reports its own,
   * labelled `replica="<id>"`. Families read from the store or the shared worker presence are the same on every
   * replica and carry no such label.
   */
  perReplica?: boolean;
}

/** Who scrapes: the endpoints their key may see (`null`: every one); families without an `endpoint` label only show to `null`. */
export type Scope = readonly string[] | null;

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const SEP = '\u0000';

abstract class Family<C> {
  readonly children = new Map<string, { values: readonly string[]; child: C }>();
  abstract readonly kind: Kind;
  constructor(readonly def: FamilyDef) {}
  protected abstract make(): C;

  /** The child of a one-label family: a map lookup, no allocation after the first call (hot paths). */
  of(value: string): C {
    let c = this.children.get(value);
    if (!c) this.children.set(value, (c = { values: [value], child: this.make() }));
    return c.child;
  }

  /** The child for these label values (created once; keep the handle on a hot path). */
  labels(...values: string[]): C {
    const key = values.length === 1 ? values[0]! : values.join(SEP);
    let c = this.children.get(key);
    if (!c) this.children.set(key, (c = { values, child: this.make() }));
    return c.child;
  }
}

/** A value that only goes up (`_total`). */
export class CounterChild {
  value = 0;
  inc(n = 1): void {
    this.value += n;
  }
}

export class Counter extends Family<CounterChild> {
  readonly kind = 'counter';
  protected make() {
    return new CounterChild();
  }
}

/** A histogram family; children are {@link Histogram}s (observe in the unit of its buckets, exposed in seconds for ms buckets). */
export class HistogramFamily extends Family<Histogram> {
  readonly kind = 'histogram';
  constructor(
    def: FamilyDef,
    private readonly buckets: readonly number[],
    /** Divides observed values and bucket bounds when exposed (1000: observed in ms, exposed in seconds). */
    private readonly divisor: number,
  ) {
    super(def);
  }
  protected make() {
    return new Histogram(this.buckets, this.divisor);
  }
}

/** A family whose samples are read at scrape time (gauges of the store, process figures, stored counters). */
interface Collected {
  kind: Kind;
  def: FamilyDef;
  /** `memo`: one map per scrape, for what several families read (the store counts). */
  collect: (scope: Scope, memo: Map<string, unknown>) => Sample[] | Promise<Sample[]>;
}

/**
 * A small Prometheus registry: counters and histograms kept in memory (children per label values), and families
 * collected at scrape time. Renders the text format in registration order, one `# HELP`/`# TYPE` per family.
 *
 * @example
 * const jobs = registry.counter({ name: 'x_total', help: '...', labels: ['endpoint'] });
 * jobs.labels('echo').inc();
 */
export class Registry {
  private readonly families: (Family<CounterChild | Histogram> | Collected)[] = [];

  /** `replicaId`: the label value of per-replica families (only set with several replicas). */
  constructor(private readonly replicaId?: string) {}

  counter(def: FamilyDef): Counter {
    const f = new Counter(def);
    this.families.push(f);
    return f;
  }

  /** Buckets in the observed unit; `divisor` converts to the exposed one (ms observed, seconds exposed: 1000). */
  histogram(def: FamilyDef, buckets: readonly number[], divisor = 1): HistogramFamily {
    const f = new HistogramFamily(def, buckets, divisor);
    this.families.push(f);
    return f;
  }

  /** A family read at scrape time. */
  collected(kind: Kind, def: FamilyDef, collect: Collected['collect']): void {
    this.families.push({ kind, def, collect });
  }

  /** The names of every family (docs test). */
  names(): string[] {
    return this.families.map((f) => f.def.name);
  }

  async render(scope: Scope): Promise<string> {
    const out: string[] = [];
    const memo = new Map<string, unknown>();
    // Collected families may read the store: all at once, then rendered in order.
    const collected = await Promise.all(
      this.families.map(
        async (f): Promise<Sample[] | undefined> =>
          f instanceof Family ? undefined : this.visible(f.def, scope) ? f.collect(scope, memo) : [],
      ),
    );
    this.families.forEach((f, i) => {
      const { name, help, labels, perReplica } = f.def;
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${f.kind}`);
      if (!this.visible(f.def, scope)) return;
      const epAt = labels.indexOf('endpoint');
      const shown = (values: readonly string[]) => epAt < 0 || scope === null || scope.includes(values[epAt]!);
      const head = perReplica && this.replicaId !== undefined ? [`replica="${esc(this.replicaId)}"`] : [];
      const labelText = (values: readonly string[]) =>
        [...head, ...labels.map((l, j) => `${l}="${esc(values[j] ?? '')}"`)].join(',');
      if (f instanceof Family) {
        const rows = [...f.children.values()].filter((c) => shown(c.values));
        rows.sort((a, b) => cmp(a.values.join(SEP), b.values.join(SEP)));
        for (const { values, child } of rows) {
          if (child instanceof Histogram) out.push(...child.lines(name, labelText(values)));
          else out.push(`${name}${braces(labelText(values))} ${child.value}`);
        }
      } else {
        for (const s of collected[i]!)
          if (shown(s.labels)) out.push(`${name}${braces(labelText(s.labels))} ${s.value}`);
      }
    });
    return `${out.join('\n')}\n`;
  }

  private visible(def: FamilyDef, scope: Scope): boolean {
    return scope === null || def.labels.includes('endpoint');
  }
}

const braces = (s: string) => (s ? `{${s}}` : '');
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
