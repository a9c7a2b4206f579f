/** Literal text to write, as opposed to a value still to be serialised. */
class Text {
  constructor(readonly text: string) {}
}

/**
 * JSON with object keys sorted, so that key order does not make two bodies different
 * (the Idempotency-Key fingerprint). It keeps its own stack instead of recursing: the body
 * parser bounds nesting, but a recursive walk overflowed at about 3,000 levels, and this one
 * has no depth at which it fails. Values JSON cannot hold (undefined, functions) are null.
 */
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  const todo: unknown[] = [root];
  while (todo.length > 0) {
    const item = todo.pop();
    if (item instanceof Text) {
      out.push(item.text);
    } else if (Array.isArray(item)) {
      // Pushed in reverse: the stack pops them in order.
      todo.push(new Text(']'));
      for (let i = item.length - 1; i >= 0; i--) {
        todo.push(item[i]);
        if (i > 0) todo.push(new Text(','));
      }
      out.push('[');
    } else if (item !== null && typeof item === 'object') {
      // Sorted by UTF-16 code units, as Array.prototype.sort() orders strings.
      const entries = Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      todo.push(new Text('}'));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        todo.push(v);
        todo.push(new Text(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`));
      }
      out.push('{');
    } else {
      out.push(JSON.stringify(item) ?? 'null');
    }
  }
  return out.join('');
}
