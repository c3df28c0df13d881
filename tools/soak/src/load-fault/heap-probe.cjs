// Preloaded into each demo replica of the load-and-fault run (`node --expose-gc -r heap-probe.cjs main.js`): every
// HEAP_EVERY_MS it runs a full GC and sends heapUsed to the harness over IPC, so the samples are the live heap, not
// garbage waiting for a collection. The leak canary ({ leak: true }) makes it retain 1 MiB every 200 ms until told
// { leak: false }: the heap check must report that.
'use strict';

const HEAP_EVERY_MS = 5000;
const retained = [];
let leaking;

if (typeof process.send === 'function' && typeof global.gc === 'function') {
  const timer = setInterval(() => {
    global.gc();
    process.send({ heap: process.memoryUsage().heapUsed });
  }, HEAP_EVERY_MS);
  timer.unref();
  process.on('message', (m) => {
    if (m.leak === true && leaking === undefined) {
      leaking = setInterval(() => retained.push(new Array(128 * 1024).fill(retained.length)), 200);
      leaking.unref();
    } else if (m.leak === false) {
      clearInterval(leaking);
      leaking = undefined;
      retained.length = 0;
    }
  });
  // The IPC channel must not keep a replica alive once the demo has closed on SIGTERM.
  process.channel?.unref();
}
