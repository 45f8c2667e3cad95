/**
 * What a change just did ("Blocked …"), in a status region that is always there and only changes
 * its text, so screen readers announce it (a region added with its text already in it often is not).
 */
export function Notice({ text }: { text: string | undefined }) {
  return (
    <p class={text ? 'notice success' : 'visually-hidden'} role="status">
      {text ?? ''}
    </p>
  );
}
