import { createHash } from 'node:crypto';
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
import { isVersionConflict } from '@hallmark/event-store';
import { formatDigitalLink, objectGtin } from '@hallmark/gs1';
import { assetStream, startAssetHistory } from '@hallmark/provenance';
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
 * one (`madeBefore`: the gateway gives back the quota this attempt spent again); the key used again
 * with another body registers the object that body describes.
 */
export async function registerObject(
  deps: RegisterDeps,
  owner: Principal,
  body: RegisterObjectBody,
  requestKey?: string,
): Promise<RegisteredObject & { madeBefore?: true }> {
  const derived = requestKey ? idSeedOf('object', requestKey, body) : undefined;
  const id = derived ? `obj_${derived.subarray(0, 10).toString('hex')}` : `obj_${randomHex(10)}`;
  /** The object an earlier attempt with this key stored, answered as made before. */
  const madeBefore = async (): Promise<(RegisteredObject & { madeBefore: true }) | undefined> => {
    const stored = await requireOwnedObject(deps, owner, id).catch((error: unknown) => {
      if (error instanceof HallmarkError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    });
    return stored
      ? { object: objectView(stored), qr_data: { gs1DigitalLink: stored.link.url, serial: stored.serial }, madeBefore: true }
      : undefined;
  };
  if (derived) {
    const stored = await madeBefore();
    if (stored) return stored;
  }
  // An object's GTIN holds 11 digits of its serial's hash: two objects share one about once in the
  // first 400,000, and a GTIN is one account's claim. The registration that finds its GTIN taken
  // draws another serial (a keyed one derives it from its key and the attempt) and tries again.
  for (let attempt = 0; ; attempt += 1) {
    const serial = newServiceSerial(serialSeedOf(derived, attempt));
    try {
      return await registerWithSerial(deps, owner, body, id, serial);
    } catch (error) {
      // The object's own stream started meanwhile: an earlier attempt with this key (its gateway
      // stopped waiting) committed it as this one wrote. Answered as made before, not CONFLICT.
      if (derived && isVersionConflict(error) && error.details?.streamId === assetStream(id)) {
        const stored = await madeBefore();
        if (stored) return stored;
      }
      if (!(error instanceof GtinTaken)) throw error;
      // Whose claims were in the way is not the caller's to know.
      if (attempt + 1 >= maxSerialDraws) throw new HallmarkError('CONFLICT', 'No free GTIN was found for the object; try again.');
    }
  }
}

/** How many serials a registration draws before it gives up on a GTIN that is taken. */
const maxSerialDraws = 5;

/** The claim of the object's GTIN was refused: another object (or a claim made before) holds it. */
class GtinTaken extends Error {}

/** The bytes a service serial is made from: random, or derived from the request's key (and the attempt, after the first). */
export function serialSeedOf(derived: Buffer | undefined, attempt: number): Uint8Array | undefined {
  if (!derived) return undefined;
  if (attempt === 0) return derived.subarray(10, 20);
  return createHash('sha256').update(derived).update(`serial-draw:${attempt}`).digest().subarray(0, 10);
}

/** Signs the object's link for `serial`, and stores its first event, its read model and its GTIN's claim in one transaction. */
async function registerWithSerial(
  deps: RegisterDeps,
  owner: Principal,
  body: RegisterObjectBody,
  id: string,
  serial: string,
): Promise<RegisteredObject> {
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
        await insertGtinClaim(sql, claim, owner.accountId).catch((error: unknown) => {
          if (error instanceof HallmarkError && error.code === 'CONFLICT') throw new GtinTaken(error.message);
          throw error;
        });
        await saveObject(sql, state, now);
      },
    },
  });
  await deps.bus.broadcast(broadcasts.gtinOwnershipChanged, { gtin });
  return { object: objectView(state), qr_data: { gs1DigitalLink: url, serial } };
}
