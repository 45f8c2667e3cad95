import { describe, expect, it } from 'vitest';
import { ApiError } from './api.ts';
import { type LoadedFor, loadedFor, sameInputs } from './use-load.ts';

describe('sameInputs', () => {
  it('compares item by item, as hook dependencies are compared', () => {
    expect(sameInputs([undefined, 0], [undefined, 0])).toBe(true);
    expect(sameInputs(['cursor-2', 0], [undefined, 0])).toBe(false);
    expect(sameInputs([undefined, 0], [undefined, 1])).toBe(false);
    expect(sameInputs([NaN], [NaN])).toBe(true);
    expect(sameInputs([1], [1, 2])).toBe(false);
  });
});

describe('loadedFor', () => {
  const pageOne: LoadedFor<string[]> = { inputs: [undefined, 0], loaded: { state: 'ready', data: ['row of page 1'] } };

  it('shows what was loaded for the same inputs', () => {
    expect(loadedFor(pageOne, [undefined, 0])).toEqual({ state: 'ready', data: ['row of page 1'] });
  });

  it('shows loading, not the previous answer, once the inputs have changed (the next page)', () => {
    expect(loadedFor(pageOne, ['cursor-2', 0])).toEqual({ state: 'loading' });
    expect(loadedFor(pageOne, ['cursor-2', 1])).toEqual({ state: 'loading' });
  });

  it('keeps what was loaded on screen through a reload of the same inputs, but not an error or a load under way', () => {
    expect(loadedFor(pageOne, [undefined, 1])).toEqual({ state: 'ready', data: ['row of page 1'] });
    expect(loadedFor(pageOne, [undefined, 7])).toEqual({ state: 'ready', data: ['row of page 1'] });
    const failed: LoadedFor<string[]> = {
      inputs: [undefined, 0],
      loaded: { state: 'error', error: new ApiError(0, 'NETWORK_ERROR', 'x') },
    };
    expect(loadedFor(failed, [undefined, 1])).toEqual({ state: 'loading' });
    expect(loadedFor({ inputs: [undefined, 0], loaded: { state: 'loading' } }, [undefined, 1])).toEqual({ state: 'loading' });
  });
});
