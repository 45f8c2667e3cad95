import { defineRoute } from './http-route.ts';
import { KeyIdParam, RotateApiKeyBody, RotatedApiKey } from './schemas/keys.ts';

// Rotating an API key (docs/API.md, "Rotating an API key").

export const rotateApiKeyRoute = defineRoute({
  operationId: 'rotateApiKey',
  method: 'POST',
  idempotent: true,
  path: '/api/v1/keys/{id}/rotate',
  summary:
    'Replace an API key: a new key with the same name, environment, scopes and lifetime (its secret shown once), while the old one keeps working for `graceSeconds` (0, 900, 3600 or 86400) and then answers EXPIRED_API_KEY. ' +
    'Recorded as `key.issued` and `key.rotated` in the account’s stream. A revoked or expired key cannot be rotated (CONFLICT).',
  tags: ['keys'],
  auth: 'api-key',
  scope: 'keys:write',
  params: KeyIdParam,
  body: RotateApiKeyBody,
  responses: { 201: { description: 'The new key, and when the old one stops', schema: RotatedApiKey } },
  errors: ['CONFLICT', 'VALIDATION_ERROR'],
  examples: {
    body: { graceSeconds: 3600 },
    responses: {
      201: {
        id: 'key_4e5f6a7b8c9d0e1f2a3b',
        type: 'api',
        name: 'production server',
        environment: 'live',
        scopes: ['assets:create', 'assets:read'],
        prefix: 'svc_live_9f8e…',
        status: 'active',
        createdBy: 'key_1a2b3c4d5e6f7a8b9c0d',
        createdAt: '2026-01-15T09:30:00.000Z',
        expiresAt: null,
        revokedAt: null,
        lastUsedAt: null,
        restrictions: null,
        secret: `svc_live_9f8e${'0'.repeat(60)}`,
        replaced: { id: 'key_8a7b6c5d4e3f2a1b0c9d', expiresAt: '2026-01-15T10:30:00.000Z' },
      },
    },
  },
});

export const keyRotationRoutes = [rotateApiKeyRoute] as const;
