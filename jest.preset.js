const path = require('path');
const names = [
  'p2-quantile',
  'token-bucket',
  'aimd',
  'gradient2',
  'codel',
  'sre-throttle',
  'core',
  'testing',
  'redis',
  'opentelemetry',
  'nestjs',
  'sim',
];
const moduleNameMapper = {};
// Tests run on sources: mirror tsconfig "paths" so no build is needed first.
for (const n of names)
  moduleNameMapper[`^@ballast/${n}$`] = path.join(__dirname, 'packages', n, 'src', 'index.ts');

module.exports = {
  testEnvironment: path.join(__dirname, 'tools', 'jest', 'strict-environment.js'),
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }] },
  moduleNameMapper,
  setupFilesAfterEnv: [path.join(__dirname, 'tools', 'jest', 'strict-process.js')],
  // A guard, not a measurement: CI machines are shared and were seen running tests ~10× slower than a quiet one
  // (a 0.4 s test hit jest's 5 s default). A hung test still fails, only later.
  testTimeout: 30_000,
};
