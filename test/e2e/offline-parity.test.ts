import { type JsonWebKeySet, verifyOffline } from '@hallmark/client';
import { signCode } from '@hallmark/codes';
import { ed25519PrivateKeyObject, ed25519Thumbprint, generateEd25519KeyPair } from '@hallmark/crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningProduct, startDistributedProduct } from '../support/distributed-product.ts';
import { call, startEmbeddedProduct } from '../support/embedded.ts';
import { publicKeyRegistration } from '../support/public-keys.ts';

// Online and offline verification give the same answer on the same input: for every case of the
// verify suite, POST /code/verify's signature check passes, and the code has not expired
// (EXPIRED_CODE), exactly when `verifyOffline` (the published key set, no server) says valid. Each case also states the answer it must get, so the
// two cannot agree by both being wrong.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

interface Case {
  name: string;
  url: string;
  environment: 'live' | 'test';
  genuine: boolean;
}

describe.each([
  ['embedded', () => startEmbeddedProduct()],
  ['distributed', () => startDistributedProduct()],
])('online and offline verification agree (%s form)', (_form, start) => {
  let product: RunningProduct;
  const cases: Case[] = [];
  const verifiers: Record<'live' | 'test', string> = { live: '', test: '' };
  const api = (method: string, path: string, key: string, body?: unknown) =>
    call<Json>(product.url, method, `/api/v1${path}`, { key, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    product = await start();
    const operator = product.operatorKey;
    const tenant = async (name: string, environment: 'live' | 'test' = 'live') => {
      const created = await api('POST', '/accounts', operator, { name, tier: 'enterprise', environment });
      return { id: created.body.account.id as string, key: created.body.apiKey.secret as string };
    };
    const brand = await tenant('Brand');
    const counterfeiter = await tenant('Counterfeiter');
    const keyless = await tenant('Brand without keys');
    verifiers.live = (await tenant('Retailer')).key;
    verifiers.test = (await tenant('Test retailer', 'test')).key;
    await api('POST', `/accounts/${brand.id}/gtins`, operator, { prefix: '9506000' });
    await api('POST', `/accounts/${keyless.id}/gtins`, operator, { gtin: '05901234123457' });
    const generate = async (key: string, body: Json) => {
      const created = await api('POST', '/code/generate', key, body);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.url as string;
    };
    const add = (name: string, url: string, genuine: boolean, environment: 'live' | 'test' = 'live') =>
      cases.push({ name, url, genuine, environment });

    const plain = await generate(brand.key, { gtin: '09506000134352', serialNumber: 'P-1' });
    const full = await generate(brand.key, {
      gtin: '09506000134352',
      serialNumber: 'P-2',
      batchNumber: 'LOT7',
      expiryDate: '2031-01-31',
    });
    add('a genuine code', plain, true);
    add('a genuine code with batch and expiry', full, true);
    const parsed = new URL(full);
    const sig = parsed.searchParams.get('sig') as string;
    add(
      'GS1 qualifier order on another host, the signature in AI 8030',
      `https://other.example/01/09506000134352/10/LOT7/21/P-2?17=310131&8030=${sig}`,
      true,
    );
    add('another batch', full.replace('/10/LOT7', '/10/LOT8'), false);
    add('another serial', plain.replace('/21/P-1', '/21/P-9'), false);
    add('another expiry', full.replace('17=310131', '17=320131'), false);
    add('an altered signature', `${plain.slice(0, -2)}${plain.endsWith('AA') ? 'BB' : 'AA'}`, false);
    add('a made-up serial with a made-up signature', `https://x.y/01/09506000134352/21/NEVER?sig=${'a'.repeat(86)}`, false);
    add('a GTIN whose owner has no key yet', `https://x.y/01/05901234123457/21/K?sig=${'a'.repeat(86)}`, false);

    // Keys a brand registers are its own to sign with; a counterfeiter's registered key signs nothing of the brand's.
    const external = generateEd25519KeyPair();
    const foreign = generateEd25519KeyPair();
    for (const [owner, pair] of [
      [brand, external],
      [counterfeiter, foreign],
    ] as const) {
      const registered = await api('POST', '/keys', owner.key, publicKeyRegistration(pair, { accountId: owner.id }, 'HSM'));
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    }
    const signedBy = (pair: ReturnType<typeof generateEd25519KeyPair>, serial: string, expiry?: string) =>
      `https://brand.example/01/09506000134352/21/${serial}?${expiry ? `17=${expiry}&` : ''}sig=${signCode(
        ed25519PrivateKeyObject(pair),
        { kid: ed25519Thumbprint(pair.publicKey), gtin: '09506000134352', serial, expiry },
      )}`;
    add('a code the brand signed itself with its registered key', signedBy(external, 'EXT-1'), true);
    add("the brand's GTIN signed by a key another tenant registered", signedBy(foreign, 'EXT-2'), false);
    // Genuine, but its expiry date (31 January 2025) has passed: SUSPICIOUS with EXPIRED_CODE online.
    add('a code the brand signed whose expiry date has passed', signedBy(external, 'EXT-3', '250131'), false);
    add('a code the brand signed whose expiry date is to come', signedBy(external, 'EXT-4', '761231'), true);

    // The operator signs GTINs nobody owns, and nothing else.
    add(
      'the operator’s code for a GTIN nobody owns',
      await generate(operator, { gtin: '04006381333931', serialNumber: 'OP-1' }),
      true,
    );
    // Once the GTIN is granted, the operator's codes of it are not the owner's, though the owner has no key yet.
    const madeBeforeTheGrant = await generate(operator, { gtin: '08712345678906', serialNumber: 'OP-2' });
    const grant = await api('POST', `/accounts/${keyless.id}/gtins`, operator, { gtin: '08712345678906' });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    add('the operator’s code for a GTIN granted since to an account without keys', madeBeforeTheGrant, false);

    // Environments never mix: a test code is genuine to a test verifier only.
    const testKey = (await api('POST', '/keys', brand.key, { name: 'sandbox', scopes: ['*'], environment: 'test' })).body.secret;
    const testCode = await generate(testKey, { gtin: '09506000134369', serialNumber: 'T-1' });
    add('a test code, verified in test', testCode, true, 'test');
    add('a test code, verified in live', testCode, false, 'live');

    // An auction object's link: its GTIN belongs to the house that registered it.
    const registered = await api('POST', '/auction/objects/register', brand.key, { title: 'Clock', category: 'watch' });
    const objectLink = registered.body.qr_data.gs1DigitalLink as string;
    add("an auction object's link", objectLink, true);
    const objectGtin = /\/01\/(\d{14})\//.exec(objectLink)?.[1] as string;
    const objectSerial = registered.body.object.service_serial as string;
    add(
      "an auction object's link re-signed by another tenant's key",
      `https://x.y/01/${objectGtin}/21/${objectSerial}/10/watch?sig=${signCode(ed25519PrivateKeyObject(foreign), {
        kid: ed25519Thumbprint(foreign.publicKey),
        gtin: objectGtin,
        serial: objectSerial,
        batch: 'watch',
      })}`,
      false,
    );
  }, 120_000);

  afterAll(async () => {
    await product?.stop();
  });

  it('gives the same answer online and offline in every case, and the right one', async () => {
    const jwks = (await (await fetch(`${product.url}/.well-known/jwks.json`)).json()) as JsonWebKeySet;
    const answers = [];
    for (const entry of cases) {
      const online = await api('POST', '/code/verify', verifiers[entry.environment], { url: entry.url });
      expect([200, 404], JSON.stringify(online.body)).toContain(online.status);
      const onlineGenuine =
        online.status === 200 &&
        online.body.checks.signature.passed === true &&
        !online.body.riskIndicators.includes('EXPIRED_CODE');
      const offline = verifyOffline(entry.url, jwks, { environment: entry.environment });
      answers.push({ case: entry.name, online: onlineGenuine, offline: offline.valid, expected: entry.genuine });
    }
    expect(answers).toEqual(answers.map((answer) => ({ ...answer, online: answer.expected, offline: answer.expected })));
    expect(answers.length).toBeGreaterThanOrEqual(16);
  });
});
