import { Resilience } from '../resilience';
import { ResiliencePolicy } from '../policy/resilience-policy';
import { stateKey } from './ports';

describe('stateKey', () => {
  it('keeps (policy, route) pairs apart whatever characters they hold', () => {
    const ids = [
      stateKey('a', 'b').id,
      stateKey('a|b', undefined).id,
      stateKey('a', 'b|').id,
      stateKey('a', undefined).id,
      stateKey('a', '').id,
      stateKey('a', '%uD800').id,
      stateKey('a', 'x\uD800').id,
      stateKey('a', 'x\uDBFF').id,
      stateKey('a', 'x\uFFFD').id,
      stateKey('a', 'x\uD83D\uDE00').id, // a paired surrogate: one code point (😀)
    ];
    expect(new Set(ids).size).toBe(ids.length);
    expect(stateKey('orders', 'eu-west/1').id).toBe('orders|eu-west%2F1');
  });

  it('takes a route with a lone surrogate (cut from user input) instead of throwing URIError', async () => {
    expect(stateKey('p', 'x\uD800y').id).toBe('p|x%uD800y');
    const resilience = new Resilience({ policies: [new ResiliencePolicy({ name: 'p', strategies: [] })] });
    await expect(resilience.run(() => 'ok', { policy: 'p', route: 'sku-\uDC00' })).resolves.toBe('ok');
    const routes = (await resilience.admin.inspect({ policy: 'p' })).map((s) => s.route);
    expect(routes).toEqual(['sku-\uDC00']);
  });
});
