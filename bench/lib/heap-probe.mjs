// Preloaded (`node --expose-gc --import <this>`) into a server the bench measures: answers IPC messages without
// keeping the process alive or changing anything else:
// - 'heap': the heap after a full GC ({ heapUsed, rss });
// - 'stall-start' / 'stall-stop': the longest event-loop stall between the two (perf_hooks
//   monitorEventLoopDelay at 1 ms resolution), answered as { stallMs } to 'stall-stop';
// - 'cpu': the process's CPU time so far, user + system, microsecond resolution (process.cpuUsage) as { cpuMs }.
import { monitorEventLoopDelay } from 'node:perf_hooks';

if (process.send) {
  let h;
  process.on('message', (m) => {
    if (m === 'heap') {
      globalThis.gc?.();
      globalThis.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.send({ heapUsed, rss });
    } else if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ cpuMs: (user + system) / 1000 });
    } else if (m === 'stall-start') {
      h?.disable();
      h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      process.send({ stallStarted: true });
    } else if (m === 'stall-stop') {
      h?.disable();
      process.send({ stallMs: h ? h.max / 1e6 : Number.NaN });
      h = undefined;
    }
  });
  // A held worker (BENCH_HOLD=1, bench/worker-ab.ts) waits on the channel for 'go': an unref'd channel would let it exit.
  if (process.env.BENCH_HOLD !== '1') process.channel?.unref();
}
