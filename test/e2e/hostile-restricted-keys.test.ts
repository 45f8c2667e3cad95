import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// Keys restricted to some GTINs (spec, Authentication 7: "Keys can be issued with scopes and resource
// restrictions"). A brand gives its packaging line or a reseller's app a key restricted to one
// product's GTIN; that key leaks. Whoever holds it tries to reach the brand's other GTINs through every
// door that names one (generate, batches, verify, report, listings, a code by its asset id), to widen
// itself (a new key, a rotation), and to reach what names no GTIN (webhooks, compliance exports,
// auction objects, usage), by x-api-key and through a console session. Over real HTTP, embedded form.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let operator: string;
const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

function expectError(response: ApiResponse<Json>, status: number, code: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error?.code, JSON.stringify(response.body)).toBe(code);
}

// Two GTINs of one granted prefix, and one of another prefix the brand also owns.
const listed = '09506000134352';
const sibling = '09506000134369';
const otherPrefix = '04006381333931';

let star: string;
let restricted: string;
let restrictedId: string;
/** A code the brand made of each GTIN with its `*` key. */
const made: Record<string, Json> = {};

const generatedToday = async () => {
  const usage = await api('GET', '/usage', { key: star });
  expect(usage.status, JSON.stringify(usage.body)).toBe(200);
  return (usage.body.quotas as Json[]).find((quota) => quota.name === 'generate')?.used as number;
};

// A restricted key's own share of the account's active blocks and links (1,000 each by default).
const keyMaxBlocks = 3;
const keyMaxLinks = 2;

beforeAll(async () => {
  t = await startTestProduct({
    HALLMARK_RESTRICTED_KEY_MAX_ACTIVE_BLOCKS: String(keyMaxBlocks),
    HALLMARK_RESTRICTED_KEY_MAX_LINKS: String(keyMaxLinks),
  });
  operator = t.product.generatedOperatorKey as string;
  const created = await api('POST', '/accounts', { key: operator, body: { name: 'Restricted brand', tier: 'enterprise' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  star = created.body.apiKey.secret;
  for (const prefix of ['9506000', '4006381']) {
    const grant = await api('POST', `/accounts/${created.body.account.id}/gtins`, { key: operator, body: { prefix } });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
  }
  for (const gtin of [listed, sibling, otherPrefix]) {
    const code = await api('POST', '/code/generate', { key: star, body: { gtin, serialNumber: `BRAND-${gtin.slice(-4)}` } });
    expect(code.status, JSON.stringify(code.body)).toBe(201);
    made[gtin] = code.body;
  }
  // Every scope of the account: only the restriction bounds it.
  const key = await api('POST', '/keys', {
    key: star,
    body: { name: 'Reseller app', scopes: ['*'], restrictions: { gtins: [listed] } },
  });
  expect(key.status, JSON.stringify(key.body)).toBe(201);
  restricted = key.body.secret;
  restrictedId = key.body.id;
}, 60_000);

afterAll(async () => {
  await t?.stop();
});

describe('issuing a restricted key', () => {
  it('answers, lists and reads back the GTINs a key is restricted to', async () => {
    const listedKeys = await api('GET', '/keys?type=api', { key: star });
    const shown = (listedKeys.body.keys as Json[]).find((key: Json) => key.id === restrictedId);
    expect(shown?.restrictions).toEqual({ gtins: [listed] });
    const me = await api('GET', '/accounts/me', { key: restricted });
    expect(me.status, JSON.stringify(me.body)).toBe(200);
    expect(me.body.key).toMatchObject({ id: restrictedId, restrictions: { gtins: [listed] } });
    const starMe = await api('GET', '/accounts/me', { key: star });
    expect(starMe.body.key.restrictions).toBeNull();
  });

  it('keeps a GTIN-13 as its GTIN-14 and refuses a wrong check digit, an empty list or an unknown member', async () => {
    const thirteen = await api('POST', '/keys', {
      key: star,
      body: { name: 'thirteen', scopes: ['assets:verify'], restrictions: { gtins: ['4006381333931'] } },
    });
    expect(thirteen.status, JSON.stringify(thirteen.body)).toBe(201);
    expect(thirteen.body.restrictions).toEqual({ gtins: [otherPrefix] });
    const wrongDigit = await api('POST', '/keys', {
      key: star,
      body: { name: 'typo', scopes: ['assets:verify'], restrictions: { gtins: [listed, '09506000134353'] } },
    });
    expectError(wrongDigit, 400, 'VALIDATION_ERROR');
    expect(wrongDigit.body.error?.details?.fields).toEqual([
      { field: 'restrictions.gtins.1', in: 'body', message: 'the check digit is 3, but the first 13 digits call for 2' },
    ]);
    for (const restrictions of [{ gtins: [] }, {}, { gtins: [listed], prefixes: ['9506000'] }, { gtins: ['ABC'] }]) {
      const refused = await api('POST', '/keys', { key: star, body: { name: 'bad', scopes: ['assets:verify'], restrictions } });
      expectError(refused, 400, 'VALIDATION_ERROR');
    }
  });
});

describe('a leaked restricted key', () => {
  it('makes codes of its GTIN, and none of the brand’s other GTINs, alone or in a batch, paying nothing for a refusal', async () => {
    const own = await api('POST', '/code/generate', { key: restricted, body: { gtin: listed, serialNumber: 'APP-1' } });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    const before = await generatedToday();
    for (const gtin of [sibling, otherPrefix, '9506000134369']) {
      const refused = await api('POST', '/code/generate', { key: restricted, body: { gtin, serialNumber: 'FORGED-1' } });
      expectError(refused, 403, 'KEY_RESTRICTED');
      expect(refused.body.error?.details).toEqual({ restrictedTo: { gtins: [listed] }, unlisted: [gtin] });
    }
    // The listed GTIN in 13 digits is compared as its GTIN-14: it reaches the service, which refuses its form.
    const thirteen = await api('POST', '/code/generate', {
      key: restricted,
      body: { gtin: listed.slice(1), serialNumber: 'APP-13' },
    });
    expectError(thirteen, 400, 'INVALID_GTIN');
    // One unlisted item refuses the whole batch before any code is made: its listed item too.
    const batch = await api('POST', '/code/generate/batch', {
      key: restricted,
      body: {
        items: [
          { gtin: listed, serialNumber: 'BATCH-OWN' },
          { gtin: sibling, serialNumber: 'BATCH-FORGED' },
        ],
      },
    });
    expectError(batch, 403, 'KEY_RESTRICTED');
    expect(batch.body.error?.details?.unlisted).toEqual([sibling]);
    expect(await generatedToday()).toBe(before);
    const codes = await api('GET', `/codes?gtin=${listed}`, { key: star });
    expect(codes.body.data.map((code: Json) => code.serialNumber).sort()).toEqual(['APP-1', `BRAND-${listed.slice(-4)}`]);
    const siblings = await api('GET', `/codes?gtin=${sibling}`, { key: star });
    expect(siblings.body.data.map((code: Json) => code.serialNumber)).toEqual([`BRAND-${sibling.slice(-4)}`]);
  });

  it('verifies and reports codes of its GTIN only; a link that does not parse is the service’s refusal', async () => {
    const own = await api('POST', '/code/verify', { key: restricted, body: { url: made[listed]?.url } });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.verdict).toBe('AUTHENTIC');
    for (const body of [{ url: made[sibling]?.url }, { content: made[otherPrefix]?.url }]) {
      expectError(await api('POST', '/code/verify', { key: restricted, body }), 403, 'KEY_RESTRICTED');
      expectError(
        await api('POST', '/code/report', { key: restricted, body: { ...body, reason: 'fake' } }),
        403,
        'KEY_RESTRICTED',
      );
    }
    // Both members, one of them listed: refused for the other (the service would refuse both anyway).
    expectError(
      await api('POST', '/code/verify', { key: restricted, body: { url: made[listed]?.url, content: made[sibling]?.url } }),
      403,
      'KEY_RESTRICTED',
    );
    const unparsed = await api('POST', '/code/verify', { key: restricted, body: { url: 'https://id.example/01/123/21/X' } });
    expect(unparsed.status, JSON.stringify(unparsed.body)).toBe(400);
    const qr = await api('GET', `/code/qr?url=${encodeURIComponent(made[sibling]?.url)}`, { key: restricted });
    expectError(qr, 403, 'KEY_RESTRICTED');
    const ownQr = await fetch(`${t.url}/api/v1/code/qr?url=${encodeURIComponent(made[listed]?.url)}`, {
      headers: { 'x-api-key': restricted },
    });
    expect(ownQr.status).toBe(200);
    expect(await ownQr.text()).toMatch(/^<svg/);
  });

  it('lists only with its GTIN named, and finds another GTIN’s code by its asset id as no code at all', async () => {
    for (const path of ['/codes', '/scans', '/blocklist', '/links']) {
      const unfiltered = await api('GET', path, { key: restricted });
      expectError(unfiltered, 403, 'KEY_RESTRICTED');
      expect(unfiltered.body.error?.details?.fields).toEqual([
        { field: 'gtin', in: 'query', message: 'is required for a restricted key' },
      ]);
      expectError(await api('GET', `${path}?gtin=${sibling}`, { key: restricted }), 403, 'KEY_RESTRICTED');
      const own = await api('GET', `${path}?gtin=${listed}`, { key: restricted });
      expect(own.status, `${path}: ${JSON.stringify(own.body)}`).toBe(200);
      const rows = (own.body.data ?? own.body.scans ?? own.body.blocks ?? own.body.links) as Json[];
      expect(
        rows.every((row) => row.gtin === listed),
        path,
      ).toBe(true);
    }
    const other = await api('GET', `/codes/${made[sibling]?.assetId}`, { key: restricted });
    expectError(other, 404, 'NOT_FOUND');
    const ownCode = await api('GET', `/codes/${made[listed]?.assetId}`, { key: restricted });
    expect(ownCode.status, JSON.stringify(ownCode.body)).toBe(200);
    expect(ownCode.body.gtin).toBe(listed);
  });

  it('blocks and links its GTIN only', async () => {
    const block = await api('POST', '/blocklist', {
      key: restricted,
      body: { gtin: sibling, serial: 'X1', kind: 'counterfeit' },
    });
    expectError(block, 403, 'KEY_RESTRICTED');
    const link = await api('POST', '/links', {
      key: restricted,
      body: { gtin: sibling, linkType: 'gs1:pip', href: 'https://brand.example/p', title: 'Product', type: 'text/html' },
    });
    expectError(link, 403, 'KEY_RESTRICTED');
    const ownBlock = await api('POST', '/blocklist', {
      key: restricted,
      body: { gtin: listed, serial: 'X1', kind: 'withdrawn' },
    });
    expect(ownBlock.status, JSON.stringify(ownBlock.body)).toBe(201);
    // Nothing of the refused block or link was recorded: the sibling has none, and its code still verifies.
    expect((await api('GET', `/blocklist?gtin=${sibling}`, { key: star })).body.blocks).toEqual([]);
    expect((await api('GET', `/links?gtin=${sibling}`, { key: star })).body.links).toEqual([]);
    const verdict = await api('POST', '/code/verify', { key: star, body: { url: made[sibling]?.url } });
    expect(verdict.body.verdict).toBe('AUTHENTIC');
  });

  it('holds at most its own share of the account’s active blocks and links, even sent all at once, and the brand still blocks and links', async () => {
    const fresh = await api('POST', '/keys', {
      key: star,
      body: { name: 'Line 7', scopes: ['assets:create', 'assets:read'], restrictions: { gtins: [listed] } },
    });
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(201);
    const [line, lineId] = [fresh.body.secret as string, fresh.body.id as string];
    const block = (key: string, serial: string) =>
      api('POST', '/blocklist', { key, body: { gtin: listed, serial, kind: 'withdrawn' } });
    // Ten blocks at once: the key's limit holds against its own requests racing (counted in the blocks' transaction).
    const sent = await Promise.all(Array.from({ length: 10 }, (_, i) => block(line, `RACE-${i}`)));
    expect(sent.filter((answer) => answer.status === 201)).toHaveLength(keyMaxBlocks);
    for (const refused of sent.filter((answer) => answer.status !== 201)) {
      expectError(refused, 409, 'CONFLICT');
      expect(refused.body.error?.details).toMatchObject({ limit: keyMaxBlocks, keyId: lineId });
    }
    const itsBlocks = await api('GET', `/blocklist?gtin=${listed}&createdBy=${lineId}&status=active`, { key: star });
    expect(itsBlocks.body.blocks).toHaveLength(keyMaxBlocks);
    // The brand's own key blocks as before; once the brand removes one of the key's, the key may block one more.
    expect((await block(star, 'BRAND-BLOCK')).status).toBe(201);
    const removed = await api('DELETE', `/blocklist/${itsBlocks.body.blocks[0].blockId}`, { key: star });
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect((await block(line, 'AFTER-REMOVAL')).status).toBe(201);
    expectError(await block(line, 'OVER-AGAIN'), 409, 'CONFLICT');

    const link = (key: string, serial: string) =>
      api('POST', '/links', {
        key,
        body: {
          gtin: listed,
          serial,
          linkType: 'gs1:pip',
          href: `https://phish.example/${serial}`,
          title: 'P',
          type: 'text/html',
        },
      });
    const linked = await Promise.all(Array.from({ length: 6 }, (_, i) => link(line, `L-${i}`)));
    expect(linked.filter((answer) => answer.status === 201)).toHaveLength(keyMaxLinks);
    for (const refused of linked.filter((answer) => answer.status !== 201)) expectError(refused, 409, 'CONFLICT');
    expect((await link(star, 'BRAND-LINK')).status).toBe(201);
    const itsLinks = await api('GET', `/links?gtin=${listed}&createdBy=${lineId}`, { key: star });
    expect(itsLinks.body.links).toHaveLength(keyMaxLinks);
  });

  it('cannot widen itself: no new key of any kind, no rotation, no revocation of the brand’s keys', async () => {
    for (const body of [
      { name: 'wider', scopes: ['*'] },
      { name: 'same', scopes: ['*'], restrictions: { gtins: [listed] } },
    ]) {
      const created = await api('POST', '/keys', { key: restricted, body });
      expectError(created, 403, 'KEY_RESTRICTED');
      expect(created.body.error?.details).toEqual({ restrictedTo: { gtins: [listed] } });
    }
    const starId = (await api('GET', '/accounts/me', { key: star })).body.key.id;
    expectError(
      await api('POST', `/keys/${starId}/rotate`, { key: restricted, body: { graceSeconds: 900 } }),
      403,
      'KEY_RESTRICTED',
    );
    expectError(await api('POST', `/keys/${starId}/revoke`, { key: restricted }), 403, 'KEY_RESTRICTED');
    expectError(await api('POST', '/keys/signing/rotate', { key: restricted }), 403, 'KEY_RESTRICTED');
    expect((await api('GET', '/accounts/me', { key: star })).status).toBe(200);
  });

  it('reaches nothing that names no GTIN: webhooks, compliance, auction objects, usage, account-wide scans', async () => {
    const refused: [string, string, unknown?][] = [
      ['GET', '/webhooks/endpoints'],
      ['POST', '/webhooks/endpoints', { url: 'https://hooks.example/x', events: ['scan.recorded'] }],
      ['GET', `/compliance/${made[listed]?.assetId}/export`],
      ['GET', `/compliance/${made[sibling]?.assetId}/merkle/root`],
      ['PATCH', '/compliance/config', { riskThresholds: {} }],
      ['POST', '/auction/objects/register', { name: 'Watch', category: 'watch' }],
      ['GET', '/usage'],
      ['GET', '/keys'],
      ['GET', '/scans/aggregates?groupBy=verdict'],
      ['GET', '/scans/top-codes'],
      ['GET', '/gtins'],
      ['PUT', '/account/branding', { displayName: 'Hijacked' }],
    ];
    for (const [method, path, body] of refused) {
      const response = await api(method, path, { key: restricted, ...(body !== undefined ? { body } : {}) });
      expectError(response, 403, 'KEY_RESTRICTED');
      expect(response.body.error?.details).toEqual({ restrictedTo: { gtins: [listed] } });
    }
  });

  it('is as restricted through a console session as by x-api-key', async () => {
    const signedIn = await api('POST', '/sessions', { body: { apiKey: restricted }, headers: { origin: t.url } });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(201);
    const token = /^hallmark_session=([0-9a-f]{64});/.exec(signedIn.headers.get('set-cookie') ?? '')?.[1];
    const headers = { cookie: `hallmark_session=${token}`, 'x-hallmark-console': '1', origin: t.url };
    const view = await api('GET', '/sessions/current', { headers });
    expect(view.body.key.restrictions).toEqual({ gtins: [listed] });
    expect(view.body.environments).toEqual(['live']);
    // A live key's session may act in test, where the account's test budget is: not a restricted key's.
    const switched = await api('PATCH', '/sessions/current', { headers, body: { environment: 'test' } });
    expectError(switched, 403, 'KEY_RESTRICTED');
    expect((await api('GET', '/sessions/current', { headers })).body.session.environment).toBe('live');
    expectError(await api('GET', '/webhooks/endpoints', { headers }), 403, 'KEY_RESTRICTED');
    expectError(await api('GET', `/codes?gtin=${sibling}`, { headers }), 403, 'KEY_RESTRICTED');
    expect((await api('GET', `/codes?gtin=${listed}`, { headers })).status).toBe(200);
  });
});

describe('rotating and revoking a restricted key', () => {
  it('restricts the replacement as the key it replaces, and the brand’s * key revokes it', async () => {
    const rotated = await api('POST', `/keys/${restrictedId}/rotate`, { key: star, body: { graceSeconds: 0 } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.restrictions).toEqual({ gtins: [listed] });
    const replacement = rotated.body.secret as string;
    expectError(
      await api('POST', '/code/generate', { key: replacement, body: { gtin: sibling, serialNumber: 'AFTER-ROTATION' } }),
      403,
      'KEY_RESTRICTED',
    );
    expect(
      (await api('POST', '/code/generate', { key: replacement, body: { gtin: listed, serialNumber: 'AFTER-ROTATION' } })).status,
    ).toBe(201);
    expectError(await api('GET', '/accounts/me', { key: restricted }), 401, 'EXPIRED_API_KEY');
    const revoked = await api('POST', `/keys/${rotated.body.id}/revoke`, { key: star });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expectError(await api('GET', '/accounts/me', { key: replacement }), 401, 'REVOKED_API_KEY');
  });

  it('revokes itself, as any key may: whoever finds it leaked ends it with the key alone', async () => {
    const foundLeaked = await api('POST', '/keys', {
      key: star,
      body: { name: 'found leaked', scopes: ['assets:verify', 'keys:write'], restrictions: { gtins: [listed] } },
    });
    expect(foundLeaked.status, JSON.stringify(foundLeaked.body)).toBe(201);
    const revoked = await api('POST', `/keys/${foundLeaked.body.id}/revoke`, { key: foundLeaked.body.secret });
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expectError(await api('GET', '/accounts/me', { key: foundLeaked.body.secret }), 401, 'REVOKED_API_KEY');
  });
});
