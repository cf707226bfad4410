// Preloaded (`node --expose-gc --import <this>`) into a server the bench measures: answers the IPC message
// 'heap' with the heap after a full GC, without keeping the process alive or changing anything else.
if (process.send) {
  process.on('message', (m) => {
    if (m !== 'heap') return;
    globalThis.gc?.();
    globalThis.gc?.();
    const { heapUsed, rss } = process.memoryUsage();
    process.send({ heapUsed, rss });
  });
  process.channel?.unref();
}
