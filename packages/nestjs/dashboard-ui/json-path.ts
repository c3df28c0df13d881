// Where a violation's path (`strategies[0].permits`) is in the editor's JSON text, to put the cursor there.

type Segment = string | number;

export function parsePath(path: string): Segment[] {
  const out: Segment[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

/**
 * The [start, end) of the value at `path` in `text`, or of the deepest part of it that exists (a missing key points
 * at its object). `undefined` when the text is not JSON.
 */
export function locate(text: string, path: string): [number, number] | undefined {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const skipString = (): void => {
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
  };
  const skipValue = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return skipString();
    if (c === '{' || c === '[') {
      let depth = 0;
      do {
        if (text[i] === '"') {
          skipString();
          continue;
        }
        if (text[i] === '{' || text[i] === '[') depth++;
        else if (text[i] === '}' || text[i] === ']') depth--;
        i++;
      } while (depth > 0 && i < text.length);
      return;
    }
    while (i < text.length && !/[\s,}\]]/.test(text[i]!)) i++;
  };
  try {
    JSON.parse(text);
  } catch {
    return undefined;
  }
  ws();
  let start = i;
  for (const seg of parsePath(path)) {
    ws();
    const open = text[i];
    if (typeof seg === 'number' && open === '[') {
      i++;
      for (let n = 0; n < seg; n++) {
        skipValue();
        ws();
        if (text[i] !== ',') return [start, start + 1];
        i++;
      }
      ws();
      if (text[i] === ']') return [start, start + 1];
    } else if (typeof seg === 'string' && open === '{') {
      i++;
      let found = false;
      for (;;) {
        ws();
        if (text[i] !== '"') break;
        const keyStart = i;
        skipString();
        const key = JSON.parse(text.slice(keyStart, i)) as string;
        ws();
        i++; // ':'
        if (key === seg) {
          found = true;
          break;
        }
        skipValue();
        ws();
        if (text[i] === ',') i++;
      }
      if (!found) return [start, start + 1];
    } else return [start, start + 1];
    ws();
    start = i;
  }
  const from = i;
  skipValue();
  return [from, i];
}
