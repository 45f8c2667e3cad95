import type { BlockKind } from '../types.ts';

/** What verifications of a blocked code will answer: counterfeit, or suspicious (withdrawn). */
export function BlockKindField({ name, kind, onChange }: { name: string; kind: BlockKind; onChange: (kind: BlockKind) => void }) {
  return (
    <fieldset class="field">
      <legend>Verifications will answer</legend>
      <label class="block-label">
        <input type="radio" name={name} checked={kind === 'counterfeit'} onChange={() => onChange('counterfeit')} />
        Counterfeit (the code is known to be on fakes)
      </label>
      <label class="block-label">
        <input type="radio" name={name} checked={kind === 'withdrawn'} onChange={() => onChange('withdrawn')} />
        Suspicious (withdrawn)
      </label>
    </fieldset>
  );
}
