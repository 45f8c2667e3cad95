import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestProduct, type TestProduct } from '../support/embedded.ts';

// Issue #17, found by the fault suite (test/e2e/faults.test.ts): a provenance event whose append
// had committed but whose read-model refresh then failed (PostgreSQL restarted in between) was
// answered 500; the 5xx released the Idempotency-Key, the client's retry ran again and the
// object's history got the event twice. Since 2026-12-03 the event and its read model are one
// transaction: a failure stores neither, and the retry stores both once.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field
type Json = Record<string, any>;

let t: TestProduct;
let house: string;

const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
  call<Json>(t.url, method, `/api/v1${path}`, options);

beforeAll(async () => {
  t = await startTestProduct();
  const created = await api('POST', '/accounts', {
    key: t.product.generatedOperatorKey as string,
    body: { name: 'Maison Write Faults', tier: 'enterprise' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  house = created.body.apiKey.secret;
});

afterAll(async () => {
  await t?.stop();
});

describe('a write whose read model could not be written', () => {
  it('stores neither the event nor its read model, and the retry with its Idempotency-Key stores both once', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Half-saved lot', category: 'watch', ownerId: 'client-jane' },
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const objectId = registered.body.object.id as string;
    const serial = registered.body.object.service_serial as string;
    // What a connection lost (or a process killed) in the middle of the write does: the read model's write fails.
    await t.product.db.query(`CREATE FUNCTION refuse_object_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'read model unavailable'; END $$`);
    await t.product.db.query(
      'CREATE TRIGGER refuse_object_update BEFORE UPDATE ON auction_objects FOR EACH ROW EXECUTE FUNCTION refuse_object_update()',
    );
    const body = { objectId, eventType: 'listed', actorRole: 'auction_house', description: 'once-only' };
    const headers = { 'idempotency-key': 'write-faults-1' };
    const first = await api('POST', '/auction/provenance/events', { key: house, body, headers });
    await t.product.db.query('DROP TRIGGER refuse_object_update ON auction_objects');
    // The event and the read model are one transaction (object-repository.ts): neither was stored.
    // Before 2026-12-03 the event was, and the dashboard stayed behind it for good after a kill.
    expect(first.status, JSON.stringify(first.body)).toBeGreaterThanOrEqual(500);
    const before = await api('GET', `/auction/objects/${serial}/provenance`, { key: house });
    expect(before.body.events.filter((event: Json) => event.details?.description === 'once-only')).toHaveLength(0);

    const retried = await api('POST', '/auction/provenance/events', { key: house, body, headers });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    const history = await api('GET', `/auction/objects/${serial}/provenance`, { key: house });
    const recorded = history.body.events.filter((event: Json) => event.details?.description === 'once-only');
    expect(recorded, JSON.stringify(history.body.events)).toHaveLength(1);
    expect(history.body.chain_valid).toBe(true);
    // The read model has it too, with the event.
    const listed = await api('GET', '/auction/dashboard/objects?status=listed&limit=100', { key: house });
    expect(listed.body.objects.map((entry: Json) => entry.serial)).toContain(serial);
  });
});

describe('a write whose answer was lost after it was stored', () => {
  it('finds the provenance event its first attempt stored, however the retry comes (#17: duplicates under faults)', async () => {
    const registered = await api('POST', '/auction/objects/register', {
      key: house,
      body: { title: 'Lot with a lost answer', category: 'watch' },
    });
    const objectId = registered.body.object.id as string;
    const body = { objectId, eventType: 'listed', actorRole: 'auction_house', description: 'answered once' };
    const headers = { 'idempotency-key': 'lost-answer-1' };
    const first = await api('POST', '/auction/provenance/events', { key: house, body, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // What a gateway killed (or a request timed out) after the service stored the event leaves: no
    // stored answer for the key, so the client's retry runs again.
    await t.product.db.query('DELETE FROM idempotent_requests');
    const retried = await api('POST', '/auction/provenance/events', { key: house, body, headers });
    expect(retried.status, JSON.stringify(retried.body)).toBe(201);
    expect(retried.body).toEqual(first.body);

    const history = await api('GET', `/auction/objects/${registered.body.object.service_serial}/provenance`, { key: house });
    expect(history.body.events.filter((event: Json) => event.details?.description === 'answered once')).toHaveLength(1);
    // A `listed` retried on a listed object is the first answer, not a CONFLICT; another key is a new event (and here a refusal).
    const another = await api('POST', '/auction/provenance/events', {
      key: house,
      body,
      headers: { 'idempotency-key': 'lost-answer-2' },
    });
    expect(another.body.error?.code).toBe('CONFLICT');
  });
});
