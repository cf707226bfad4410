// Preloaded (`node --expose-gc --import <this>`) into a server the bench measures: answers IPC messages without
// keeping the process alive or changing anything else:
// - 'heap': the heap after a full GC ({ heapUsed, rss });
// - 'stall-start' / 'stall-stop': the longest event-loop stall between the two (perf_hooks
//   monitorEventLoopDelay at 1 ms resolution), answered as { stallMs } to 'stall-stop'.
import { monitorEventLoopDelay } from 'node:perf_hooks';

if (process.send) {
  let h;
  process.on('message', (m) => {
    if (m === 'heap') {
      globalThis.gc?.();
      globalThis.gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.send({ heapUsed, rss });
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
  process.channel?.unref();
}
