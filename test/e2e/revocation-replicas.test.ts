// Revocation across replicas (from a review of 2026-12-05): with two gateways and two replicas of
// code-service and verify-service, each change is made through one gateway and used at once through
// the other, many rounds over. Those the next request sees at once: a console sign-out, an API key
// revoked or rotated with no grace, a public key's codes, a GTIN claim moved or revoked, a signing
// key rotated, a prefix granted and revoked, branding. (The JWKS is told by a broadcast a few
// milliseconds after the answer: docs/SECURITY.md.) A change whose broadcast is lost (plain SQL) reaches every replica
// within about a second (the cache epochs): a GTIN claim revoked so took minutes, as verify-service
// kept code-service's stale answer under its own newer epoch.
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, generateEd25519KeyPair } from '@hallmark/crypto';
import { gs1CheckDigit } from '@hallmark/gs1';
import { createPostgresDatabase } from '@hallmark/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DistributedProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';
import { type SilentLink, startSilentLink } from '../support/silent-link.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

const rounds = 20;
const natsUrl = process.env.HALLMARK_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
let nextGtin = 10_000_000_000 + (Date.now() % 80_000_000_000);
/** A GTIN-14 no other test uses, with its check digit. */
function uniqueGtin(): string {
  nextGtin += 1;
  const first13 = `09${String(nextGtin).padStart(11, '0')}`;
  return `${first13}${gs1CheckDigit(first13)}`;
}

const pathOf = (url: string) => url.slice(new URL(url).origin.length);
const cookieHeaders = (token: string) => ({ cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1' });

/** A probe's answer and when the probe was sent (performance.now()). */
interface Probe<T> {
  sentAt: number;
  value: T;
}

/**
 * Makes `change` and sends `probe` twice the moment its answer has been received, each on an idle
 * connection: what a client may do "at once". With `flood`, four more connections also send `probe`
 * in a loop from before the change to 80 ms after its answer. Gives the answers of every probe sent
 * after the change's answer was received, and the change's answer.
 */
async function probesAfter<T, R>(
  probe: () => Promise<T>,
  change: () => Promise<R>,
  { flood = true }: { flood?: boolean } = {},
): Promise<{ after: T[]; answer: R }> {
  let stop = false;
  const seen: Array<Probe<T>> = [];
  const worker = async () => {
    while (!stop) {
      const sentAt = performance.now();
      seen.push({ sentAt, value: await probe() });
    }
  };
  const workers = flood ? Array.from({ length: 4 }, worker) : [];
  if (flood) await new Promise((resolve) => setTimeout(resolve, 15));
  const answer = await change();
  const answeredAt = performance.now();
  const immediate = await Promise.all([probe(), probe()]);
  if (flood) await new Promise((resolve) => setTimeout(resolve, 80));
  stop = true;
  await Promise.all(workers);
  return { after: [...immediate, ...seen.filter((one) => one.sentAt > answeredAt).map((one) => one.value)], answer };
}

describe('revocation across two gateways and two replicas (distributed form)', () => {
  let product: DistributedProduct;
  let one: string;
  let two: string;
  let three: string;
  let lateBus: SilentLink;
  let brand: { id: string; key: string };
  let gtin: string;
  let serial = 0;
  const at = (base: string, method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call<Json>(base, method, `/api/v1${path}`, options);

  /** The verdict of POST /code/verify through `base` (or the error code). */
  const verdictAt = async (base: string, url: string) => {
    const answer = await at(base, 'POST', '/code/verify', { key: brand.key, body: { url } });
    return answer.status === 200 ? (answer.body.verdict as string) : `${answer.status} ${answer.body.error?.code}`;
  };
  /** Verdicts of `count` verifications at once through `base`: both verify-service replicas answer some. */
  const verdictsAt = (base: string, url: string, count = 4) =>
    Promise.all(Array.from({ length: count }, () => verdictAt(base, url)));

  const generateAt = async (base: string, key: string, forGtin: string) =>
    at(base, 'POST', '/code/generate', { key, body: { gtin: forGtin, serialNumber: `RV-${++serial}` } });
  const pageHtml = async (base: string, link: string) => {
    const response = await fetch(`${base}/verify${pathOf(link)}`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    return response.text();
  };

  const grant = async (accountId: string, value: string) => {
    const granted = await at(one, 'POST', `/accounts/${accountId}/gtins`, { key: product.operatorKey, body: { gtin: value } });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    return granted.body.id as string;
  };

  const newAccount = async (name: string) => {
    const created = await at(one, 'POST', '/accounts', { key: product.operatorKey, body: { name, tier: 'enterprise' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
  };

  /** A change made straight in the product's database: no service hears of it over the bus. */
  async function sql(text: string, params: unknown[]) {
    const db = createPostgresDatabase({ connectionString: product.databaseUrl, applicationName: 'review-revocation' });
    try {
      await db.query(text, params);
    } finally {
      await db.close();
    }
  }

  beforeAll(async () => {
    // A third gateway reaches NATS through a relay whose traffic a test can hold: its broadcasts late.
    lateBus = await startSilentLink({ host: '127.0.0.1', port: Number(new URL(natsUrl).port || 4222) });
    product = await startDistributedProduct(
      { HALLMARK_PUBLIC_RATE_LIMIT: '100000', HALLMARK_AUTH_FAILURES_PER_MINUTE: '100000' },
      {
        replicas: { 'code-service': 2, 'verify-service': 2 },
        gatewayEnv: [{}, {}, { HALLMARK_NATS_URL: `nats://127.0.0.1:${lateBus.port}` }],
      },
    );
    [one, two, three] = product.gatewayUrls as [string, string, string];
    brand = await newAccount('Revoking brand');
    gtin = uniqueGtin();
    await grant(brand.id, gtin);
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
    await lateBus?.close();
  });

  it('a console session signed out through one gateway is refused at once by the other', async () => {
    const late: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const signedIn = await call<Json>(one, 'POST', '/api/v1/sessions', { body: { apiKey: brand.key } });
      expect(signedIn.status).toBe(201);
      const token = /hallmark_session=([0-9a-f]{64});/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1] as string;
      expect((await at(two, 'GET', '/accounts/me', { headers: cookieHeaders(token) })).status).toBe(200);
      const { after } = await probesAfter(
        async () => (await at(two, 'GET', '/accounts/me', { headers: cookieHeaders(token) })).status,
        async () => expect((await at(one, 'DELETE', '/sessions/current', { headers: cookieHeaders(token) })).status).toBe(204),
      );
      const served = after.filter((status) => status !== 401);
      if (served.length > 0) late.push(`round ${round}: ${served.length} of ${after.length} served`);
    }
    expect(late).toEqual([]);
  }, 60_000);

  /** GET /accounts/me through `base` with `key`: its status and error code. */
  const meWith = async (base: string, key: string) => {
    const answer = await at(base, 'GET', '/accounts/me', { key });
    return { status: answer.status, code: answer.body.error?.code as string | undefined, details: answer.body.error?.details };
  };
  /**
   * `change` through the first gateway while the third's bus connection is held (its broadcast
   * late), probing the second and third gateways as probesAfter does; then the held bus traffic goes.
   */
  const keyProbesAfter = async <R>(secret: string, change: () => Promise<R>) => {
    lateBus.hold();
    try {
      const { after, answer } = await probesAfter(async () => Promise.all([meWith(two, secret), meWith(three, secret)]), change);
      return { after: after.flat(), answer };
    } finally {
      lateBus.release();
    }
  };

  // Served by the other gateways until they heard the broadcast: 1 to 12 rounds of 200 (a review of
  // 2026-12-05), and every request until the cache epoch came round (a second) where the broadcast
  // was late or lost, as on the third gateway here. The revoking gateway now marks the key stopped
  // in the counters every request's spend reads, before it answers.
  it('an API key revoked through one gateway is refused at once by the others, with REVOKED_API_KEY, whether or not they heard', async () => {
    const late: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const made = await at(one, 'POST', '/keys', {
        key: brand.key,
        body: { name: `revoked ${round}`, scopes: ['assets:read'] },
      });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      const secret = made.body.secret as string;
      // The other gateways have it cached.
      expect([(await meWith(two, secret)).status, (await meWith(three, secret)).status]).toEqual([200, 200]);
      const { after } = await keyProbesAfter(secret, async () =>
        expect((await at(one, 'POST', `/keys/${made.body.id}/revoke`, { key: brand.key })).status).toBe(200),
      );
      const served = after.filter((answer) => answer.status !== 401 || answer.code !== 'REVOKED_API_KEY');
      if (served.length > 0) late.push(`round ${round}: ${JSON.stringify(served)} of ${after.length}`);
    }
    expect(late).toEqual([]);
    // The brand's own key, of the same account and counters, goes on.
    expect([(await meWith(two, brand.key)).status, (await meWith(three, brand.key)).status]).toEqual([200, 200]);
  }, 60_000);

  it('an API key rotated through one gateway with no grace is refused at once by the others, with EXPIRED_API_KEY and its expiredAt', async () => {
    const made = await at(one, 'POST', '/keys', { key: brand.key, body: { name: 'rotated', scopes: ['assets:read'] } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    let current = { id: made.body.id as string, secret: made.body.secret as string };
    const late: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const old = current;
      expect([(await meWith(two, old.secret)).status, (await meWith(three, old.secret)).status]).toEqual([200, 200]);
      const { after, answer } = await keyProbesAfter(old.secret, () =>
        at(one, 'POST', `/keys/${old.id}/rotate`, { key: brand.key, body: { graceSeconds: 0 } }),
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      current = { id: answer.body.id, secret: answer.body.secret };
      const served = after.filter(
        (one) =>
          one.status !== 401 || one.code !== 'EXPIRED_API_KEY' || one.details?.expiredAt !== answer.body.replaced.expiresAt,
      );
      if (served.length > 0) late.push(`round ${round}: ${JSON.stringify(served)} of ${after.length}`);
    }
    expect(late).toEqual([]);
    // The new key works everywhere.
    expect([(await meWith(two, current.secret)).status, (await meWith(three, current.secret)).status]).toEqual([200, 200]);
  }, 60_000);

  it('a public key revoked through one gateway: a code signed with it is not AUTHENTIC at once on either verify replica', async () => {
    const late: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const factory = generateEd25519KeyPair();
      const registered = await at(one, 'POST', '/keys', {
        key: brand.key,
        body: publicKeyRegistration(factory, { accountId: brand.id }, `line ${round}`),
      });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
      const kid = registered.body.id as string;
      const sign = (s: string) =>
        `https://brand.example/01/${gtin}/21/${s}?sig=${signCode(ed25519PrivateKeyObject(factory), { kid, gtin, serial: s })}`;
      // Both replicas have the key (verified AUTHENTIC through both gateways).
      const before = sign(`PK-BEFORE-${round}`);
      for (const base of [one, two])
        expect(await verdictsAt(base, before)).toEqual(['AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC']);
      let signed = 0;
      const { after } = await probesAfter(
        () => verdictAt(two, sign(`PK-AFTER-${round}-${++signed}`)),
        async () => expect((await at(one, 'POST', `/keys/${kid}/revoke`, { key: brand.key })).status).toBe(200),
      );
      after.push(...(await verdictsAt(two, before)));
      const served = after.filter((verdict) => verdict === 'AUTHENTIC');
      if (served.length > 0) late.push(`round ${round}: ${served.length} of ${after.length} AUTHENTIC`);
    }
    expect(late).toEqual([]);
  }, 60_000);

  it('a GTIN claim moved by the operator: the old owner cannot generate at once on either replica, its codes stop verifying, the new owner generates', async () => {
    const newOwner = await newAccount('New owner');
    const late: string[] = [];
    for (let round = 0; round < rounds / 2; round++) {
      const moving = uniqueGtin();
      const claimId = await grant(brand.id, moving);
      // Both code-service replicas cache the brand as the signer; both verify replicas its codes.
      const before = await Promise.all(Array.from({ length: 4 }, () => generateAt(two, brand.key, moving)));
      for (const answer of before) expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      const link = before[0]?.body.url as string;
      expect(await verdictsAt(two, link)).toEqual(['AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC']);
      const { after: statuses } = await probesAfter(
        async () => (await generateAt(two, brand.key, moving)).status,
        async () => {
          const revoked = await at(one, 'POST', `/gtins/${claimId}/revoke`, { key: product.operatorKey });
          expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
        },
      );
      const verdicts = await verdictsAt(two, link);
      const made = statuses.filter((status) => status !== 403);
      if (made.length > 0)
        late.push(`round ${round}: generate after revoke ${made.length} of ${statuses.length}: ${made.join(',')}`);
      if (verdicts.includes('AUTHENTIC')) late.push(`round ${round}: old code after revoke ${verdicts.join(',')}`);
      // Moved to another account: its codes are made and verify; the old owner's still not.
      await grant(newOwner.id, moving);
      const theirs = await Promise.all(Array.from({ length: 4 }, () => generateAt(two, newOwner.key, moving)));
      expect(theirs.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
      const oldAgain = await Promise.all(Array.from({ length: 4 }, () => generateAt(two, brand.key, moving)));
      if (oldAgain.some((answer) => answer.status !== 403)) {
        late.push(`round ${round}: old owner after move ${oldAgain.map((answer) => answer.status).join(',')}`);
      }
      const oldVerdicts = await verdictsAt(two, link);
      if (oldVerdicts.includes('AUTHENTIC')) late.push(`round ${round}: old code after move ${oldVerdicts.join(',')}`);
    }
    expect(late).toEqual([]);
  }, 60_000);

  it('a registered key’s codes for a GTIN whose claim was revoked through one gateway are not AUTHENTIC at once on the other', async () => {
    const factory = generateEd25519KeyPair();
    const registered = await at(one, 'POST', '/keys', {
      key: brand.key,
      body: publicKeyRegistration(factory, { accountId: brand.id }, 'claim line'),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const kid = registered.body.id as string;
    const late: string[] = [];
    for (let round = 0; round < rounds / 2; round++) {
      const moving = uniqueGtin();
      const claimId = await grant(brand.id, moving);
      const sign = (s: string) =>
        `https://brand.example/01/${moving}/21/${s}?sig=${signCode(ed25519PrivateKeyObject(factory), { kid, gtin: moving, serial: s })}`;
      expect(await verdictsAt(two, sign(`CL-BEFORE-${round}`))).toEqual(['AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC']);
      expect((await at(one, 'POST', `/gtins/${claimId}/revoke`, { key: product.operatorKey })).status).toBe(200);
      const after = await verdictsAt(two, sign(`CL-AFTER-${round}`));
      if (after.includes('AUTHENTIC')) late.push(`round ${round}: ${after.join(',')}`);
    }
    expect(late).toEqual([]);
  }, 60_000);

  it('a signing key rotated through one gateway: every code made through the other after the answer carries the new key', async () => {
    const late: string[] = [];
    // At most 10 signing keys an account a day (its first and its rotations): three accounts.
    for (let account = 0; account < 3; account++) {
      const signer = await newAccount(`Rotating ${account}`);
      const itsGtin = uniqueGtin();
      await grant(signer.id, itsGtin);
      for (let round = 0; round < 6; round++) {
        const warm = await Promise.all(Array.from({ length: 4 }, () => generateAt(two, signer.key, itsGtin)));
        for (const answer of warm) expect(answer.status).toBe(201);
        const { after: kids, answer: rotated } = await probesAfter(
          async () => (await generateAt(two, signer.key, itsGtin)).body.keyId as string,
          () => at(one, 'POST', '/keys/signing/rotate', { key: signer.key }),
        );
        expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
        const old = kids.filter((kid) => kid !== rotated.body.id);
        if (old.length > 0)
          late.push(`${account}/${round}: ${old.length} of ${kids.length} with ${old[0]} (new ${rotated.body.id})`);
      }
    }
    expect(late).toEqual([]);
  }, 60_000);

  it('a prefix granted over a GTIN the operator signed unowned, then revoked: each holds at once on the other gateway and both replicas', async () => {
    const holder = await newAccount('Prefix holder');
    const late: string[] = [];
    for (let round = 0; round < rounds / 2; round++) {
      const prefix = `8${String(nextGtin++ % 100_000_000).padStart(8, '0')}`;
      const first13 = `0${prefix}123`;
      const covered = `${first13}${gs1CheckDigit(first13)}`;
      // Nobody owns it: the operator's account signs it, and both replicas cache that.
      const unowned = await Promise.all(Array.from({ length: 4 }, () => generateAt(two, product.operatorKey, covered)));
      expect(unowned.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
      const granted = await at(one, 'POST', `/accounts/${holder.id}/gtins`, { key: product.operatorKey, body: { prefix } });
      expect(granted.status, JSON.stringify(granted.body)).toBe(201);
      const [operatorAfter, holderAfter] = await Promise.all([
        Promise.all(Array.from({ length: 4 }, () => generateAt(two, product.operatorKey, covered))),
        Promise.all(Array.from({ length: 4 }, () => generateAt(two, holder.key, covered))),
      ]);
      const operatorStatuses = operatorAfter.map((answer) => answer.status);
      const holderStatuses = holderAfter.map((answer) => answer.status);
      if (operatorStatuses.some((status) => status !== 403))
        late.push(`${round}: operator after grant ${operatorStatuses.join(',')}`);
      if (holderStatuses.some((status) => status !== 201)) late.push(`${round}: holder after grant ${holderStatuses.join(',')}`);
      expect((await at(one, 'POST', `/gtins/${granted.body.id}/revoke`, { key: product.operatorKey })).status).toBe(200);
      const holderRevoked = await Promise.all(Array.from({ length: 4 }, () => generateAt(two, holder.key, covered)));
      const revokedStatuses = holderRevoked.map((answer) => answer.status);
      if (revokedStatuses.some((status) => status !== 403))
        late.push(`${round}: holder after revoke ${revokedStatuses.join(',')}`);
    }
    expect(late).toEqual([]);
  }, 60_000);

  it('branding changed through one gateway: the other gateway’s resolver page names the brand anew at once', async () => {
    const late: string[] = [];
    const links: string[] = [];
    // Four links a round, each looked at once: the resolver's reload cache (one client here) would
    // show a link's first scan again for 10 s.
    for (let i = 0; i < (rounds / 2) * 4; i++) {
      const made = await generateAt(one, brand.key, gtin);
      expect(made.status).toBe(201);
      links.push(made.body.url as string);
    }
    const setName = async (name: string) => {
      const put = await at(one, 'PUT', '/account/branding', { key: brand.key, body: { displayName: name } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
    };
    await setName('Maison Zero');
    for (let round = 0; round < rounds / 2; round++) {
      const [warmA, warmB, freshTwo, freshOne] = links.slice(round * 4, round * 4 + 4) as [string, string, string, string];
      // Both verify replicas remember the issuer as it is now.
      await Promise.all([pageHtml(two, warmA), pageHtml(two, warmB)]);
      await setName(`Maison N${round}x`);
      const shown = await Promise.all([pageHtml(two, freshTwo), pageHtml(one, freshOne)]);
      const names = shown.map((html) => /Maison (Zero|N\d+x)/.exec(html)?.[0]);
      if (!names.every((name) => name === `Maison N${round}x`)) late.push(`round ${round}: ${names.join(',')}`);
    }
    expect(late).toEqual([]);
  }, 60_000);

  describe('a change whose broadcast was lost (plain SQL) reaches every replica within about a second', () => {
    /** Polls `probe` until it says done `inARow` times running; the milliseconds it took (fails past 5 s). */
    async function msUntil(probe: () => Promise<boolean>, inARow = 6) {
      const started = Date.now();
      let streak = 0;
      while (streak < inARow) {
        streak = (await probe()) ? streak + 1 : 0;
        if (Date.now() - started > 5_000) throw new Error('the change did not arrive within 5 s');
      }
      return Date.now() - started;
    }

    it('a public key revoked by SQL: its codes are not AUTHENTIC on either verify replica within a second', async () => {
      const factory = generateEd25519KeyPair();
      const registered = await at(one, 'POST', '/keys', {
        key: brand.key,
        body: publicKeyRegistration(factory, { accountId: brand.id }, 'sql line'),
      });
      expect(registered.status).toBe(201);
      const kid = registered.body.id as string;
      const s = 'SQL-PK-1';
      const link = `https://brand.example/01/${gtin}/21/${s}?sig=${signCode(ed25519PrivateKeyObject(factory), { kid, gtin, serial: s })}`;
      for (const base of [one, two])
        expect(await verdictsAt(base, link)).toEqual(['AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC']);
      await sql(`UPDATE verification_keys SET status = 'revoked', revoked_at = now() WHERE id = $1`, [kid]);
      const took = await msUntil(
        async () => (await verdictAt(two, link)) !== 'AUTHENTIC' && (await verdictAt(one, link)) !== 'AUTHENTIC',
      );
      expect(took).toBeLessThan(1_500);
    }, 30_000);

    it('a GTIN claim revoked by SQL: its codes, verified without pause, are not AUTHENTIC on either verify replica within a second', async () => {
      // Each try is one GTIN, changed at another moment of the replicas' 500 ms epoch polls (each
      // process polls in a phase of its own, so whether verify-service sees the change before
      // code-service depends on that moment).
      for (let attempt = 0; attempt < 5; attempt++) {
        const revoking = uniqueGtin();
        await grant(brand.id, revoking);
        const made = await generateAt(one, brand.key, revoking);
        expect(made.status).toBe(201);
        const link = made.body.url as string;
        for (const base of [one, two]) {
          expect(await verdictsAt(base, link)).toEqual(['AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC', 'AUTHENTIC']);
        }
        await sql('UPDATE gtin_claims SET revoked_at = now() WHERE value = $1 AND revoked_at IS NULL', [revoking]);
        const took = await msUntil(
          async () => (await verdictAt(two, link)) !== 'AUTHENTIC' && (await verdictAt(one, link)) !== 'AUTHENTIC',
        ).catch((error: Error) => `${error.message} (try ${attempt + 1})`);
        expect(took, `try ${attempt + 1}`).toBeTypeOf('number');
        expect(took).toBeLessThan(1_500);
      }
    }, 45_000);

    it('branding changed by SQL: both gateways’ pages name the brand anew within a second', async () => {
      const links: string[] = [];
      for (let i = 0; i < 60; i++) {
        const made = await generateAt(one, brand.key, gtin);
        expect(made.status).toBe(201);
        links.push(made.body.url as string);
      }
      expect(await pageHtml(two, links[0] as string)).not.toContain('Maison Sql');
      expect(await pageHtml(one, links[1] as string)).not.toContain('Maison Sql');
      await sql(`UPDATE account_branding SET display_name = 'Maison Sql', updated_at = now() WHERE account_id = $1`, [brand.id]);
      let next = 2;
      const unseen = () => {
        const link = links[next++];
        if (!link) throw new Error('out of links never looked at');
        return link;
      };
      const took = await msUntil(async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const [a, b] = await Promise.all([pageHtml(one, unseen()), pageHtml(two, unseen())]);
        return a.includes('Maison Sql') && b.includes('Maison Sql');
      }, 3);
      expect(took).toBeLessThan(1_500);
    }, 30_000);
  });
});
