import { AttributeTable } from './attribute-table';

describe('AttributeTable', () => {
  it('returns the same frozen object for the same key, so recording allocates nothing once warm', () => {
    const t = new AttributeTable();
    const a = t.outcomeCode('p', 'r', 'failure', 'internal');
    expect(t.outcomeCode('p', 'r', 'failure', 'internal')).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).toEqual({
      'ballast.policy': 'p',
      'ballast.route': 'r',
      'ballast.outcome': 'failure',
      'ballast.code': 'internal',
    });
    expect(t.base('p', undefined)).toEqual({ 'ballast.policy': 'p' });
    expect(t.store('p', undefined, 'rateLimit')).toEqual({
      'ballast.policy': 'p',
      'ballast.store': 'rateLimit',
    });
  });

  it('keeps a route named "" apart from no route', () => {
    const t = new AttributeTable();
    expect(t.base('p', '')).toEqual({ 'ballast.policy': 'p', 'ballast.route': '' });
    expect(t.base('p', undefined)).not.toHaveProperty(['ballast.route']);
  });

  it('keeps the set it creates at the cap: the next lookup of that key allocates nothing', () => {
    const t = new AttributeTable({}, 2);
    t.base('p', 'a');
    t.base('p', 'b');
    const c = t.base('p', 'c'); // the cap is reached: the table starts over with this key
    expect(t.base('p', 'c')).toBe(c);
    expect(t.size).toBe(1);
  });

  it('stays bounded when route names churn: past the cap it starts over', () => {
    const t = new AttributeTable({}, 100);
    for (let i = 0; i < 10_000; i++) t.outcome('p', `route-${i}`, 'success');
    expect(t.size).toBeLessThanOrEqual(102);
    expect(t.outcome('p', 'route-9999', 'success')).toEqual({
      'ballast.policy': 'p',
      'ballast.route': 'route-9999',
      'ballast.outcome': 'success',
    });
  });
});
