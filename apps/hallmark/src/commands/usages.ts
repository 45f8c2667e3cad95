/**
 * Every command's usage, kept apart from the commands so that `hallmark --help` and
 * `hallmark <command> --help` answer without loading the database, bus and service code.
 */

export const accountsUsage = `hallmark accounts create --name <name> --tier free|starter|enterprise [--env live|test] [--url <url>] [--key <key>]
    Creates an account and its first API key (scope *); prints the key once.
  hallmark accounts list [--json] [--url <url>] [--key <key>]
    Lists every account, newest first (--json: one JSON object per line).
    With --url, or while "hallmark start" runs on HALLMARK_DATA_DIR, both go through the API with
    --key, HALLMARK_OPERATOR_KEY or <data dir>/operator-key; else on the database itself.`;

export const keysUsage = `hallmark keys create --account <id> --name <name> --scopes <a,b,…> [--env live|test] [--expires-in 90d] [--gtins <a,b,…>]
    Creates an API key; prints it once. --gtins restricts it to those GTINs (docs/API.md,
    "Resource restrictions").
  hallmark keys list --account <id> [--json]
    Lists the account's API keys, never a secret: id, environment, status, prefix, name, scopes,
    and the GTINs it is restricted to (- for none); --json: one JSON object per line.
  hallmark keys revoke --account <id> --id <key id> [--env live|test]
    Revokes a key; with HALLMARK_NATS_URL and HALLMARK_BUS_SECRET set, running gateways drop it at
    once (else within a second).
    With --url <url>, or while "hallmark start" runs on HALLMARK_DATA_DIR, the keys commands go
    through the API with --key <key>, HALLMARK_OPERATOR_KEY or <data dir>/operator-key, for that
    key's own account; else on the database itself.`;

export const auditUsage = `hallmark audit <export-file> --jwks <file>
    Verifies a compliance export (GET /compliance/{assetId}/export) with no server: the checkpoint
    signature, every event's hash and link, every inclusion proof, the root.
    Exit code 0: valid; 1: not valid.`;

export const verifyUsage = `hallmark verify <link> [--url <url>] [--key <key>]
    Verifies a code through the running product's API (POST /code/verify; it counts as a scan) and
    prints the result. Exit code 0: AUTHENTIC; 1: any other verdict.
  hallmark verify --offline --jwks <file> [--env live|test] <link>
    Checks a code's signature against a saved key set (GET /.well-known/jwks.json), with no server:
    only keys of the account that owns the GTIN count (the operator's, for a GTIN nobody owns), and
    only keys of the environment (live unless said). Exit code 0: valid; 1: not valid.`;

export const projectionsUsage = `hallmark projections rebuild [--accept-differences]
    Replays every event into a new Merkle projection and puts it in place of the old one when it
    reproduces every tree the old one recorded (the roots come out identical). Where the events no
    longer give what the log recorded (deleted, changed, or moved to another owner: the evidence
    that /compliance/{assetId}/verify reports as LOG_MISMATCH) it leaves the log as it was, names
    those assets and exits 1; --accept-differences replaces it anyway. Works on the database itself,
    with the product stopped (a progress bar on a terminal).`;

export const gtinsUsage = `hallmark gtins grant --account <id> (--gtin <14 digits> | --prefix <4-12 digits>) [--env live|test]
    Lets the account sign codes for a GTIN or a GS1 Company Prefix (live covers both environments).
  hallmark gtins list --account <id> [--json]
    Lists the account's GTINs and prefixes (--json: one JSON object per line).
  hallmark gtins revoke --id <claim id>
    Takes a GTIN or prefix away; codes signed under it stop verifying as authentic.
  hallmark gtins conflicts
    GTINs that had codes of several accounts when ownership came in: owned by nobody until granted.
    With --url <url>, or while "hallmark start" runs on HALLMARK_DATA_DIR, grant, list and revoke go
    through the API (with --key <key>, HALLMARK_OPERATOR_KEY or <data dir>/operator-key); else, and
    always for conflicts, on the database itself, which needs the server stopped.`;

export const migrateUsage = `hallmark migrate [--roles <file>]
    Applies every pending migration of the distributed form to HALLMARK_DATABASE_URL and exits. Run it
    with the tables' owner before services that use roles of their own (infra/postgres/roles.sql), which
    cannot change the schema. --roles then applies that file (the roles and their grants), so a table a
    release adds is granted in the same step (the image holds it at /app/infra/postgres/roles.sql).`;

export const codesUsage = `hallmark codes generate --csv <file> [--out <results.csv>] [--batch-size <n>] [--resume] [--json] [--url <url>] [--key <key>]
    Generates a code per row of the CSV (header: gtin, serialNumber, and any of batchNumber,
    expiryDate, schemaId, schemaVersion, metadata.<name>) through the API, in requests of up to
    10,000 rows (--batch-size fewer). The results (row, line, status, the link as url, assetId,
    errorCode, errorMessage) go to --out, or to stdout; failed rows are also named on stderr by row
    and line. --resume: a row refused as DUPLICATE_SERIAL whose code has the row's very fields (an
    earlier run made it) is listed with that code, status "existing". --json: a JSON summary with
    --out, else one JSON object per row. Exit code 1 when any row failed.`;

export const complianceUsage = `hallmark compliance export <assetId> --out <file> [--format json|csv|epcis] [--json] [--url <url>] [--key <key>]
    Streams an asset's compliance export to <file> (written whole or not at all); check it with
    "hallmark audit". --json: a JSON summary.`;

/** Said once in the general help: how the commands that talk to a running product find it. */
export const productApiUsage = `The codes, compliance and verify (online) commands talk to a running product: --url <url>, else the server
"hallmark start" runs on HALLMARK_DATA_DIR; with --key <key>, HALLMARK_API_KEY, HALLMARK_OPERATOR_KEY
or <data dir>/operator-key.`;
