import type { Environment, Principal, VerificationKeyView } from '@hallmark/contracts';
import type { SqlExecutor } from '@hallmark/sql';

export interface VerificationKeyRow {
  id: string;
  account_id: string;
  environment: Environment;
  type: 'signing' | 'public';
  name: string | null;
  public_key: string;
  sealed_private_key?: string | null;
  status: 'active' | 'retired' | 'revoked';
  /** A registered public key's proof of possession (packages/crypto/src/key-registration.ts); null for signing keys and public keys registered before proofs. */
  proof?: string | null;
  /** The API key that registered a public key; null for signing keys and public keys registered before it was recorded (migration 0012). */
  created_by?: string | null;
  created_at: Date | string;
  retired_at: Date | string | null;
  revoked_at: Date | string | null;
}

const isoOrNull = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export function toVerificationKeyView(row: VerificationKeyRow): VerificationKeyView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    environment: row.environment,
    algorithm: 'Ed25519',
    publicKey: row.public_key,
    status: row.status,
    createdBy: row.created_by ?? null,
    createdAt: new Date(row.created_at).toISOString(),
    retiredAt: isoOrNull(row.retired_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

/**
 * The key `kid` of this owner (account and environment). A kid is one key, but one public key may
 * be registered in both environments of an account, and by accounts that registered it before
 * registrations needed a proof (accounts migration 0009): only with the owner is the row certain.
 * Without one: the signing key of that kid (the service's keys are unique), else the only row
 * holding it, else none (ask with the owner).
 */
export async function findVerificationKey(
  sql: SqlExecutor,
  kid: string,
  owner?: Principal,
): Promise<VerificationKeyRow | undefined> {
  if (owner) {
    const rows = await sql.query<VerificationKeyRow>(
      'SELECT * FROM verification_keys WHERE id = $1 AND account_id = $2 AND environment = $3',
      [kid, owner.accountId, owner.environment],
    );
    return rows[0];
  }
  const rows = await findKeyRegistrations(sql, kid);
  return rows.find((row) => row.type === 'signing') ?? (rows.length === 1 ? rows[0] : undefined);
}

/** Every row of the key `kid`, of every account and environment. */
export async function findKeyRegistrations(sql: SqlExecutor, kid: string): Promise<VerificationKeyRow[]> {
  return sql.query<VerificationKeyRow>(
    'SELECT * FROM verification_keys WHERE id = $1 ORDER BY created_at, account_id, environment',
    [kid],
  );
}

export async function findActiveSigningKey(sql: SqlExecutor, owner: Principal): Promise<VerificationKeyRow | undefined> {
  const rows = await sql.query<VerificationKeyRow>(
    `SELECT * FROM verification_keys WHERE account_id = $1 AND environment = $2 AND type = 'signing' AND status = 'active'`,
    [owner.accountId, owner.environment],
  );
  return rows[0];
}

/** Inserts a signing key as the active one unless the account already has one; true when inserted. */
export async function insertActiveSigningKey(
  sql: SqlExecutor,
  owner: Principal,
  key: { kid: string; publicKey: string; sealedPrivateKey: string },
): Promise<boolean> {
  const rows = await sql.query(
    `INSERT INTO verification_keys (id, account_id, environment, type, public_key, sealed_private_key, status)
     VALUES ($1, $2, $3, 'signing', $4, $5, 'active')
     ON CONFLICT (account_id, environment) WHERE type = 'signing' AND status = 'active' DO NOTHING
     RETURNING id`,
    [key.kid, owner.accountId, owner.environment, key.publicKey, key.sealedPrivateKey],
  );
  return rows.length === 1;
}

export async function retireActiveSigningKey(sql: SqlExecutor, owner: Principal): Promise<void> {
  await sql.query(
    `UPDATE verification_keys SET status = 'retired', retired_at = clock_timestamp()
     WHERE account_id = $1 AND environment = $2 AND type = 'signing' AND status = 'active'`,
    [owner.accountId, owner.environment],
  );
}

/**
 * The owner's signing keys made in the last day (its first, and each rotation's), and when the
 * soonest of them leaves that day (seconds from now; 0 when none), by the database's clock as keys are written.
 */
export async function signingKeysMadeInADay(
  sql: SqlExecutor,
  owner: Principal,
): Promise<{ count: number; freeInSeconds: number }> {
  const [row] = await sql.query<{ count: number; free_in: number | string | null }>(
    `SELECT count(*)::int AS count,
            extract(epoch FROM min(created_at) + interval '1 day' - clock_timestamp())::float8 AS free_in
       FROM verification_keys
      WHERE account_id = $1 AND environment = $2 AND type = 'signing' AND created_at > clock_timestamp() - interval '1 day'`,
    [owner.accountId, owner.environment],
  );
  return { count: row?.count ?? 0, freeInSeconds: Math.max(0, Number(row?.free_in ?? 0)) };
}

export async function countActivePublicKeys(sql: SqlExecutor, owner: Principal): Promise<number> {
  const [row] = await sql.query<{ active: number }>(
    `SELECT count(*)::int AS active FROM verification_keys
     WHERE account_id = $1 AND environment = $2 AND type = 'public' AND status = 'active'`,
    [owner.accountId, owner.environment],
  );
  return row?.active ?? 0;
}

/** Registers a public key for this owner; undefined when the owner has a row of this kid already. */
export async function insertPublicKey(
  sql: SqlExecutor,
  owner: Principal,
  key: { kid: string; name: string; publicKey: string; proof: string | null; createdBy: string | null },
): Promise<VerificationKeyRow | undefined> {
  const rows = await sql.query<VerificationKeyRow>(
    `INSERT INTO verification_keys (id, account_id, environment, type, name, public_key, proof, status, created_by)
     VALUES ($1, $2, $3, 'public', $4, $5, $6, 'active', $7)
     ON CONFLICT (id, account_id, environment) DO NOTHING RETURNING *`,
    [key.kid, owner.accountId, owner.environment, key.name, key.publicKey, key.proof, key.createdBy],
  );
  return rows[0];
}

/**
 * Registers again a public key this owner revoked: the same row (same id) active again, with the
 * new name, proof and creator, `createdAt` now (when this registration was made) and no `revokedAt`.
 */
export async function reactivatePublicKey(
  sql: SqlExecutor,
  owner: Principal,
  key: { kid: string; name: string; proof: string | null; createdBy: string | null },
): Promise<VerificationKeyRow | undefined> {
  const rows = await sql.query<VerificationKeyRow>(
    `UPDATE verification_keys
     SET status = 'active', revoked_at = NULL, name = $4, proof = $5, created_by = $6, created_at = clock_timestamp()
     WHERE id = $1 AND account_id = $2 AND environment = $3 AND type = 'public' AND status = 'revoked' RETURNING *`,
    [key.kid, owner.accountId, owner.environment, key.name, key.proof, key.createdBy],
  );
  return rows[0];
}

/** Revokes a registered public key of this owner; its first revocation time when it already was. */
export async function revokePublicKey(
  sql: SqlExecutor,
  owner: Principal,
  kid: string,
  at: Date,
): Promise<VerificationKeyRow | undefined> {
  const rows = await sql.query<VerificationKeyRow>(
    `UPDATE verification_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, $4)
     WHERE id = $1 AND account_id = $2 AND environment = $3 AND type = 'public' RETURNING *`,
    [kid, owner.accountId, owner.environment, at],
  );
  return rows[0];
}

/** Keys that codes may have been signed with: signing keys (active or retired) and active public keys. */
export async function listPublishableKeys(sql: SqlExecutor): Promise<Array<VerificationKeyRow & { is_operator: boolean }>> {
  return sql.query<VerificationKeyRow & { is_operator: boolean }>(
    `SELECT k.id, k.account_id, k.environment, k.type, k.public_key, k.status, k.retired_at, a.is_operator
     FROM verification_keys k JOIN accounts a ON a.id = k.account_id
     WHERE k.status <> 'revoked' ORDER BY k.created_at, k.id`,
  );
}
