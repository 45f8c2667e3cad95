/**
 * Text someone else chose (a tenant's key or account name), as the terminal should show it: on one
 * line, with nothing it would act on. Control characters (escape sequences that retitle the window,
 * clear the screen or write the clipboard; line breaks and tabs that forge lines or columns of a
 * tab-separated listing) and bidirectional overrides are written as `\xNN` or `\u{NNNN}`, and a
 * backslash as `\\`, so what is shown reads back to exactly what is stored.
 */
export function printable(text: string): string {
  return text.replace(/[\\\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, (character) => {
    if (character === '\\') return '\\\\';
    const code = character.codePointAt(0) as number;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}
