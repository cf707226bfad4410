import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Registry, Sample } from './registry.js';

/** Event-loop delay is reported over windows of this length (the last complete one). */
const LOOP_WINDOW_MS = 10_000;
const LOOP_FIGURES = ['mean', 'p50', 'p90', 'p99', 'max'] as const;

const one = (value: number): Sample[] => [{ labels: [], value }];

/**
 * The standard process figures (names as prom-client's defaults, so existing dashboards read them): CPU, memory,
 * heap, open file descriptors, active handles, and event-loop delay (`perf_hooks.monitorEventLoopDelay`, sampled every
 * 20 ms, reported for the last complete 10 s window). All per replica. `stop()` ends the sampler.
 */
export function processMetrics(registry: Registry): { stop(): void } {
  const perReplica = true;
  const startSeconds = Math.round(performance.timeOrigin) / 1000;
  registry.collected(
    'counter',
    {
      name: 'process_cpu_user_seconds_total',
      help: 'User CPU time spent by the process, seconds.',
      labels: [],
      perReplica,
    },
    () => one(process.cpuUsage().user / 1e6),
  );
  registry.collected(
    'counter',
    {
      name: 'process_cpu_system_seconds_total',
      help: 'System CPU time spent by the process, seconds.',
      labels: [],
      perReplica,
    },
    () => one(process.cpuUsage().system / 1e6),
  );
  registry.collected(
    'counter',
    {
      name: 'process_cpu_seconds_total',
      help: 'User and system CPU time spent by the process, seconds.',
      labels: [],
      perReplica,
    },
    () => {
      const u = process.cpuUsage();
      return one((u.user + u.system) / 1e6);
    },
  );
  registry.collected(
    'gauge',
    {
      name: 'process_start_time_seconds',
      help: 'Start time of the process, seconds since the epoch.',
      labels: [],
      perReplica,
    },
    () => one(startSeconds),
  );
  registry.collected(
    'gauge',
    { name: 'process_resident_memory_bytes', help: 'Resident set size, bytes.', labels: [], perReplica },
    () => one(process.memoryUsage.rss()),
  );
  registry.collected(
    'gauge',
    {
      name: 'process_open_fds',
      help: 'Open file descriptors (Linux: /proc/self/fd; absent elsewhere).',
      labels: [],
      perReplica,
    },
    () => {
      try {
        return one(readdirSync('/proc/self/fd').length - 1); // less the one readdir opened
      } catch {
        return [];
      }
    },
  );
  const heap = (field: 'heapUsed' | 'heapTotal' | 'external') => () => one(process.memoryUsage()[field]);
  registry.collected(
    'gauge',
    { name: 'nodejs_heap_size_used_bytes', help: 'V8 heap used, bytes.', labels: [], perReplica },
    heap('heapUsed'),
  );
  registry.collected(
    'gauge',
    { name: 'nodejs_heap_size_total_bytes', help: 'V8 heap allocated, bytes.', labels: [], perReplica },
    heap('heapTotal'),
  );
  registry.collected(
    'gauge',
    {
      name: 'nodejs_external_memory_bytes',
      help: 'Memory of C++ objects bound to JavaScript (Buffers included), bytes.',
      labels: [],
      perReplica,
    },
    heap('external'),
  );
  registry.collected(
    'gauge',
    {
      name: 'nodejs_active_resources',
      help: 'Handles and requests keeping the event loop alive (sockets, timers, file requests), by type.',
      labels: ['type'],
      perReplica,
    },
    () => {
      const byType = new Map<string, number>();
      for (const t of process.getActiveResourcesInfo()) byType.set(t, (byType.get(t) ?? 0) + 1);
      return [...byType].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, n]) => ({ labels: [t], value: n }));
    },
  );

  // Event-loop delay: the live histogram is read into `last` and reset every window.
  const loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  let last: Record<(typeof LOOP_FIGURES)[number], number> | undefined;
  const read = (h: IntervalHistogram) => ({
    mean: h.count ? h.mean : 0,
    p50: h.count ? h.percentile(50) : 0,
    p90: h.count ? h.percentile(90) : 0,
    p99: h.count ? h.percentile(99) : 0,
    max: h.count ? h.max : 0,
  });
  const timer = setInterval(() => {
    last = read(loop);
    loop.reset();
  }, LOOP_WINDOW_MS);
  timer.unref();
  for (const fig of LOOP_FIGURES)
    registry.collected(
      'gauge',
      {
        name: `nodejs_eventloop_lag_${fig}_seconds`,
        help: `Event-loop delay, ${fig === 'mean' || fig === 'max' ? fig : `${fig.slice(1)}th percentile`}, over the last 10 s window, seconds.`,
        labels: [],
        perReplica,
      },
      () => one((last ?? read(loop))[fig] / 1e9),
    );
  return {
    stop() {
      clearInterval(timer);
      loop.disable();
    },
  };
}
