// Property tests are deterministic (the guide: no test may pass or fail by luck): fast-check runs from one fixed
// seed unless a test gives its own. FC_SEED=<n> explores other inputs locally; a failure prints its seed and path.
try {
  require('fast-check').configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261204) });
} catch (error) {
  if (error && error.code !== 'MODULE_NOT_FOUND') throw error;
}

// Fails the suite on any unhandled rejection or process warning (peers.md §5 item 25):
// a resilience library must never leave a promise unhandled or a listener piling up.
const problems = [];
const onRejection = (reason) =>
  problems.push(`unhandledRejection: ${reason && reason.stack ? reason.stack : String(reason)}`);
const onWarning = (w) => {
  if (w && w.name === 'ExperimentalWarning') return;
  problems.push(`process warning: ${w && w.name}: ${w && w.message}`);
};
beforeAll(() => {
  process.on('unhandledRejection', onRejection);
  process.on('warning', onWarning);
});
afterAll(async () => {
  // give late rejections a chance to surface
  await new Promise((r) => setImmediate(r));
  process.off('unhandledRejection', onRejection);
  process.off('warning', onWarning);
  // Warnings Node emits on the real process (strict-environment.js); the sandbox's `process` never sees them.
  const real = globalThis.__ballastProcessWarnings;
  if (Array.isArray(real)) problems.push(...real);
  if (problems.length) throw new Error(problems.join('\n'));
});
