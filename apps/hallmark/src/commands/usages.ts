/**
 * Every command's usage, kept apart from the commands so that `hallmark --help` and
 * `hallmark <command> --help` answer without loading the database, bus and service code.
 */

export const accountsUsage = `hallmark accounts create --name <name> --tier free|starter|enterprise [--env live|test]
    Creates an account and its first API key (scope *); prints the key once.
  hallmark accounts list [--json]
    Lists every account, newest first (--json: one JSON object per line).
    While "hallmark start" runs on HALLMARK_DATA_DIR, both go through its API with --key,
    HALLMARK_OPERATOR_KEY or <data dir>/operator-key.`;

export const keysUsage = `hallmark keys create --account <id> --name <name> --scopes <a,b,…> [--env live|test] [--expires-in 90d]
    Creates an API key; prints it once.
  hallmark keys list --account <id> [--json]
    Lists the account's API keys, never a secret (--json: one JSON object per line).
  hallmark keys revoke --account <id> --id <key id> [--env live|test]
    Revokes a key; with HALLMARK_NATS_URL set, running gateways drop it at once.
    While "hallmark start" runs on HALLMARK_DATA_DIR, the keys commands go through its API with
    --key <key>, HALLMARK_OPERATOR_KEY or <data dir>/operator-key, for that key's own account.`;

export const auditUsage = `hallmark audit <export-file> --jwks <file>
    Verifies a compliance export (GET /compliance/{assetId}/export) with no server: the checkpoint
    signature, every event's hash and link, every inclusion proof, the root.
    Exit code 0: valid; 1: not valid.`;

export const verifyUsage = `hallmark verify --offline --jwks <file> [--env live|test] <url>
    Checks a code's signature against a saved key set (GET /.well-known/jwks.json), with no server:
    only keys of the account that owns the GTIN count (the operator's, for a GTIN nobody owns), and
    only keys of the environment (live unless said). Exit code 0: valid; 1: not valid.`;

export const projectionsUsage = `hallmark projections rebuild
    Drops the Merkle projection and replays every event into it; the roots come out identical.`;

export const gtinsUsage = `hallmark gtins grant --account <id> (--gtin <14 digits> | --prefix <4-12 digits>) [--env live|test]
    Lets the account sign codes for a GTIN or a GS1 Company Prefix (live covers both environments).
  hallmark gtins list --account <id> [--json]
    Lists the account's GTINs and prefixes (--json: one JSON object per line).
  hallmark gtins revoke --id <claim id>
    Takes a GTIN or prefix away; codes signed under it stop verifying as authentic.
  hallmark gtins conflicts
    GTINs that had codes of several accounts when ownership came in: owned by nobody until granted.
    While "hallmark start" runs on HALLMARK_DATA_DIR, grant, list and revoke go through its API (with --key,
    HALLMARK_OPERATOR_KEY or <data dir>/operator-key); conflicts needs the server stopped.`;

export const migrateUsage = `hallmark migrate
    Applies every pending migration of the distributed form to HALLMARK_DATABASE_URL and exits. Run it
    with the tables' owner before services that use roles of their own (infra/postgres/roles.sql), which
    cannot change the schema.`;
