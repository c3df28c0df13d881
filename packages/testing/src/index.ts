export { FakeClock, flushMicrotasks } from './fake-clock';
export type { FakeTimer } from './fake-clock';
export { seededRandom } from './seeded-random';
