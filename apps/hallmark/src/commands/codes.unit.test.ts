import type { CodeListItem } from '@hallmark/contracts';
import { describe, expect, it } from 'vitest';
import { isCodeOfRow } from './codes.ts';

// `codes generate --resume`: which code refused as DUPLICATE_SERIAL is the row's own (made by an earlier run).
const code: CodeListItem = {
  assetId: 'ast_1',
  gtin: '09506000134352',
  serialNumber: 'RES-1',
  batchNumber: 'L1',
  expiryDate: null,
  url: 'https://id.example/01/09506000134352/21/RES-1/10/L1?sig=x',
  createdAt: '2026-12-02T10:00:00.000Z',
  metadata: { name: 'Watch', colour: 'blue' },
};
const row = { gtin: '09506000134352', serialNumber: 'RES-1', batchNumber: 'L1', metadata: { colour: 'blue', name: 'Watch' } };

describe('isCodeOfRow', () => {
  it('takes the code with the very fields of the row, metadata in any key order', () => {
    expect(isCodeOfRow(code, row)).toBe(true);
  });

  it('refuses another item under the same serial: another batch, expiry or metadata, or none where the code has one', () => {
    expect(isCodeOfRow(code, { ...row, batchNumber: 'L2' })).toBe(false);
    expect(isCodeOfRow(code, { ...row, batchNumber: undefined })).toBe(false);
    expect(isCodeOfRow(code, { ...row, expiryDate: '2027-01-31' })).toBe(false);
    expect(isCodeOfRow(code, { ...row, metadata: { name: 'Watch' } })).toBe(false);
    expect(isCodeOfRow(code, { ...row, metadata: { name: 'Watch', colour: 'red' } })).toBe(false);
    expect(isCodeOfRow({ ...code, metadata: {} }, { ...row, metadata: undefined })).toBe(true);
    expect(isCodeOfRow(code, { ...row, serialNumber: 'RES-2' })).toBe(false);
  });
});
