import { useState } from 'preact/hooks';

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

/**
 * What the last change on a list did, and its setter: said only while that list (a status, say) is
 * the one shown, so a change answered after the person moved to another list is not said there.
 */
export function useNoticeOf(list: string): [string | undefined, (text: string | undefined) => void] {
  const [last, setLast] = useState<{ list: string; text: string } | undefined>();
  return [last?.list === list ? last.text : undefined, (text) => setLast(text === undefined ? undefined : { list, text })];
}
