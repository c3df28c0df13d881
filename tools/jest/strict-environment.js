// The Node test environment, plus: collects the worker's real process warnings for strict-process.js.
// Jest hands each test file a *copy* of `process` whose `on('warning')` never sees warnings Node emits (a
// MaxListenersExceededWarning, a deprecation), so the check has to listen here, outside the sandbox.
const { TestEnvironment } = require('jest-environment-node');

class StrictEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.warnings = [];
    this.onWarning = (w) => {
      if (w && w.name === 'ExperimentalWarning') return;
      this.warnings.push(`process warning: ${w && w.name}: ${w && w.message}`);
    };
    this.global.__ballastProcessWarnings = this.warnings;
  }

  async setup() {
    await super.setup();
    process.on('warning', this.onWarning);
  }

  async teardown() {
    process.off('warning', this.onWarning);
    await super.teardown();
  }
}

module.exports = StrictEnvironment;
