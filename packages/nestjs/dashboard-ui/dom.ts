/** `h('div.cls', { attrs }, ...children)`: the page builds its DOM with this (no HTML strings, so nothing is injected). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K | `${K}.${string}`,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name as K);
  if (classes.length > 0) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs))
    if (v === true) el.setAttribute(k, '');
    else if (typeof v === 'string') el.setAttribute(k, v);
  el.append(...children);
  return el;
}

/** Sets text only when it changed (1,000 rows a second: no needless layout). */
export function text(el: Element, value: string): void {
  if (el.textContent !== value) el.textContent = value;
}
