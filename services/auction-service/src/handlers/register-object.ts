import { insertGtinClaim, newGtinClaim, type SigningKeyring } from '@hallmark/accounts';
import type { Bus } from '@hallmark/bus';
import { signedMessage } from '@hallmark/codes';
import {
  broadcasts,
  type Category,
  HallmarkError,
  type Principal,
  type RegisteredObject,
  type RegisterObjectBody,
} from '@hallmark/contracts';
import { randomHex } from '@hallmark/crypto';
import { formatDigitalLink, objectGtin } from '@hallmark/gs1';
import { startAssetHistory } from '@hallmark/provenance';
import { type DomainError, decide, isRefusal, type ObjectCommand, type SignedLink } from '../domain/object.ts';
import { foldObjectHistory, type ObjectState, securityFigures } from '../object-history.ts';
import { type ObjectRepositoryDeps, requireOwnedObject } from '../object-repository.ts';
import { idSeedOf } from '../request-ids.ts';
import { newServiceSerial } from '../service-serial.ts';
import { saveObject } from '../store/object-store.ts';

const toHallmarkError = (refusal: DomainError) => new HallmarkError(refusal.code, refusal.message, refusal.details);

export interface RegisterDeps extends ObjectRepositoryDeps {
  bus: Bus;
  keyring: SigningKeyring;
  resolverUrl: string;
}

export function objectView(state: ObjectState) {
  const figures = securityFigures(state);
  return {
    id: state.id,
    service_serial: state.serial,
    title: state.title,
    category: state.category,
    status: state.status,
    security_tier: figures.security_tier,
    anchor_count: figures.anchor_count,
    entropy_bits: figures.entropy_bits,
  };
}

/**
 * POST /auction/objects/register: status consigned, a signed link, the `registered` event and first
 * custody entry. With an Idempotency-Key (`requestKey`) the object's id and service serial are
 * derived from it and the body: a retry whose first answer was lost after the object was stored (the
 * gateway died, its lease lapsed) finds that object and answers it, instead of registering a second
 * one; the key used again with another body registers the object that body describes.
 */
export async function registerObject(
  deps: RegisterDeps,
  owner: Principal,
  body: RegisterObjectBody,
  requestKey?: string,
): Promise<RegisteredObject> {
  const derived = requestKey ? idSeedOf('object', requestKey, body) : undefined;
  const id = derived ? `obj_${derived.subarray(0, 10).toString('hex')}` : `obj_${randomHex(10)}`;
  if (derived) {
    const stored = await requireOwnedObject(deps, owner, id).catch((error: unknown) => {
      if (error instanceof HallmarkError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    });
    if (stored) return { object: objectView(stored), qr_data: { gs1DigitalLink: stored.link.url, serial: stored.serial } };
  }
  const serial = newServiceSerial(derived?.subarray(10, 20));
  const gtin = objectGtin(serial);
  const command = (link: SignedLink): ObjectCommand => ({
    type: 'RegisterObject',
    objectId: id,
    serial,
    link,
    title: body.title,
    category: body.category,
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.estimated_value ? { estimatedValue: body.estimated_value } : {}),
    ownerId: body.ownerId ?? owner.accountId,
  });
  // Decided once before anything is signed (the rules need no link), once with the signed link.
  const unsigned = decide(command({ url: '', gtin, kid: '', signature: '' }), undefined);
  if (isRefusal(unsigned)) throw toHallmarkError(unsigned);
  const category = body.category as Category;
  const key = await deps.keyring.activeSigningKey(owner);
  const signature = key.sign(signedMessage({ kid: key.kid, gtin, serial, batch: category })).toString('base64url');
  const url = formatDigitalLink({ origin: deps.resolverUrl, gtin, serial, batch: category, signature }, 'spec');
  const decision = decide(command({ url, gtin, kid: key.kid, signature }), undefined);
  if (isRefusal(decision)) throw toHallmarkError(decision);
  const now = deps.clock();
  const history = startAssetHistory({ assetId: id, owner }, decision, now.toISOString());
  // The object as its first event makes it, for the read model written in that event's transaction.
  const state = foldObjectHistory(
    history.events.map((event, index) => ({
      eventId: event.eventId ?? '',
      streamId: history.streamId,
      streamVersion: index + 1,
      globalPosition: 0,
      type: event.type,
      data: event.data,
      metadata: event.metadata ?? {},
      recordedAt: now.toISOString(),
    })),
  ) as ObjectState;
  // The object's GTIN is the registering account's, like a brand's own: verification online and
  // offline (the JWKS lists it under the account's keys) takes no other account's signature for it.
  const claim = newGtinClaim(
    { accountId: owner.accountId, environment: owner.environment, target: { kind: 'gtin', value: gtin }, source: 'registered' },
    now,
  );
  await deps.eventStore.startStreams([history], {
    readModels: {
      db: deps.db,
      async write(sql) {
        await insertGtinClaim(sql, claim, owner.accountId);
        await saveObject(sql, state, now);
      },
    },
  });
  await deps.bus.broadcast(broadcasts.gtinOwnershipChanged, { gtin });
  return { object: objectView(state), qr_data: { gs1DigitalLink: url, serial } };
}
