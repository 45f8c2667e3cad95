import { HallmarkError } from '@hallmark/contracts';
import type { ExpectedVersion } from './event-store.ts';

export function versionConflict(streamId: string, expectedVersion: ExpectedVersion, actualVersion: number): HallmarkError {
  return new HallmarkError(
    'CONFLICT',
    `Stream ${streamId} is at version ${actualVersion}, not the expected ${expectedVersion}; read it again and retry.`,
    { streamId, expectedVersion, actualVersion },
  );
}

export function isVersionConflict(error: unknown): error is HallmarkError {
  return error instanceof HallmarkError && error.code === 'CONFLICT' && error.details?.streamId !== undefined;
}
