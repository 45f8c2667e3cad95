/**
 * Words someone else wrote (a reason given with a block or a report), in quotation marks and
 * isolated (`<bdi>`): a direction override in them (U+202E) cannot reorder the console's own words
 * around them, as it did in "Unblocking keeps the block in the record as removed." after a reason
 * written by a narrow key (test/e2e/hostile-stored-injection.test.ts).
 */
export function Quoted({ text }: { text: string }) {
  return (
    <>
      “<bdi>{text}</bdi>”
    </>
  );
}
