/**
 * The first member name that one object of a JSON text gives twice, or undefined. `text` must be
 * valid JSON (JSON.parse it first). JSON.parse keeps the last of two members of one name, other
 * readers the first, and a person reading the file whichever they see: an export that names a
 * member twice says two things, and an auditor refuses it. Names are compared decoded (`"a"` and
 * `"\u0061"` are one name).
 */
export function firstRepeatedMember(text: string): string | undefined {
  /** One entry per open object (its names so far) or array (undefined). */
  const open: Array<Set<string> | undefined> = [];
  let expectingName = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (char === '{') {
      open.push(new Set());
      expectingName = true;
    } else if (char === '[') {
      open.push(undefined);
      expectingName = false;
    } else if (char === '}' || char === ']') {
      open.pop();
      expectingName = false;
    } else if (char === ',') {
      expectingName = open.at(-1) !== undefined;
    } else if (char === '"') {
      const start = at;
      for (at += 1; text[at] !== '"'; at++) if (text[at] === '\\') at += 1;
      const names = open.at(-1);
      if (expectingName && names) {
        const name = JSON.parse(text.slice(start, at + 1)) as string;
        if (names.has(name)) return name;
        names.add(name);
      }
      expectingName = false;
    }
  }
  return undefined;
}
