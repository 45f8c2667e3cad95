// Writes infra/nats/authorization.conf: nats-server's users and their permissions for the namespace
// `hallmark` (infra/nats-permissions.ts). `pnpm gen:nats`; `pnpm check:infra` says when it is stale.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { natsAuthorization } from './nats-permissions.ts';

export const authorizationFile = fileURLToPath(new URL('nats/authorization.conf', import.meta.url));
export const authorizedNamespace = 'hallmark';

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(authorizationFile, natsAuthorization(authorizedNamespace));
  process.stdout.write(`wrote ${authorizationFile}\n`);
}
