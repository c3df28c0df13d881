import { locate, parsePath } from '../../../dashboard-ui/json-path';

/** The page's retune editor puts the cursor on a violation's value: where `locate` says it is. */
describe("the dashboard page's JSON path locator", () => {
  const text = JSON.stringify(
    {
      name: 'p',
      strategies: [
        { type: 'retry', maxAttempts: 2 },
        { type: 'rateLimit', permits: -1, per: '1s' },
      ],
    },
    null,
    2,
  );
  const at = (path: string): string | undefined => {
    const span = locate(text, path);
    return span === undefined ? undefined : text.slice(span[0], span[1]);
  };

  it('reads core violation paths', () => {
    expect(parsePath('strategies[1].permits')).toEqual(['strategies', 1, 'permits']);
    expect(parsePath('hedge.delay')).toEqual(['hedge', 'delay']);
  });

  it('finds the value at a path, nested in arrays and objects', () => {
    expect(at('strategies[1].permits')).toBe('-1');
    expect(at('strategies[1].per')).toBe('"1s"');
    expect(at('strategies[0]')).toBe('{\n      "type": "retry",\n      "maxAttempts": 2\n    }');
    expect(at('name')).toBe('"p"');
  });

  it('points at the deepest part that exists when the path goes further', () => {
    expect(at('strategies[1].missing')).toBe('{');
    expect(at('strategies[5]')).toBe('[');
    expect(at('hedge')).toBe('{');
  });

  it('gives up on text that is not JSON', () => {
    expect(locate('{ "a": ', 'a')).toBeUndefined();
  });

  it('skips strings that hold brackets and escaped quotes', () => {
    const tricky = '{ "a": "x]}\\"{", "b": [ "[", { "c": 3 } ] }';
    const span = locate(tricky, 'b[1].c')!;
    expect(tricky.slice(span[0], span[1])).toBe('3');
  });
});
