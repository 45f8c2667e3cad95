import { useState } from 'preact/hooks';

/** Copies a text to the clipboard, and says so (or says to copy it by hand where the browser refuses). */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [said, setSaid] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied to the clipboard.');
    } catch {
      setSaid('The browser did not allow copying: select the text and copy it by hand.');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="button secondary" onClick={copy}>
        {label}
      </button>
      <span role="status" class="copy-said">
        {said}
      </span>
    </span>
  );
}
