import { describe, expect, it } from 'vitest';
import { HallmarkError, toHallmarkError } from './hallmark-error.ts';

describe('toHallmarkError', () => {
  it('keeps a HallmarkError as it is', () => {
    const error = new HallmarkError('CONFLICT', 'taken', { streamId: 's' });
    expect(toHallmarkError(error)).toBe(error);
    expect(error.status).toBe(409);
  });

  it('rebuilds one from its data, as it arrives over the bus', () => {
    const error = toHallmarkError({ code: 'NOT_FOUND', message: 'no such object', details: { id: 'x' } });
    expect(error).toBeInstanceOf(HallmarkError);
    expect(error.toData()).toEqual({ code: 'NOT_FOUND', message: 'no such object', details: { id: 'x' } });
  });

  it('hides anything else behind INTERNAL_ERROR, keeping it as the cause', () => {
    const cause = new Error('password=hunter2');
    const error = toHallmarkError(cause);
    expect(error.code).toBe('INTERNAL_ERROR');
    expect(error.message).not.toContain('hunter2');
    expect(error.cause).toBe(cause);
    expect(toHallmarkError({ code: 'NOT_A_CODE', message: 'x' }).code).toBe('INTERNAL_ERROR');
  });
});
