import { describe, expect, it } from 'vitest';
import { isCodeOfRow } from './existing-code.ts';
import type { CodeSummary } from './types.ts';

const code: CodeSummary = {
  assetId: 'ast_1',
  gtin: '09506000134352',
  serialNumber: 'SN-1',
  batchNumber: 'LOT-1',
  expiryDate: '2031-12-31',
  url: 'https://id.example/01/09506000134352/21/SN-1',
  createdAt: '2026-12-02T10:00:00.000Z',
  metadata: { name: 'Fountain pen' },
};
const row = {
  gtin: '09506000134352',
  serialNumber: 'SN-1',
  batchNumber: 'LOT-1',
  expiryDate: '2031-12-31',
  metadata: { name: 'Fountain pen' },
};

describe('isCodeOfRow', () => {
  it('takes the code with the very fields of the row', () => {
    expect(isCodeOfRow(code, row)).toBe(true);
    expect(
      isCodeOfRow({ ...code, batchNumber: null, expiryDate: null, metadata: {} }, { gtin: row.gtin, serialNumber: 'SN-1' }),
    ).toBe(true);
  });

  it('refuses another item under the same serial', () => {
    expect(isCodeOfRow(code, { ...row, batchNumber: 'LOT-2' })).toBe(false);
    expect(isCodeOfRow(code, { ...row, expiryDate: undefined })).toBe(false);
    expect(isCodeOfRow(code, { ...row, metadata: { name: 'Pencil' } })).toBe(false);
    expect(isCodeOfRow(code, { ...row, metadata: { name: 'Fountain pen', colour: 'blue' } })).toBe(false);
    expect(isCodeOfRow(code, { ...row, metadata: undefined })).toBe(false);
    expect(isCodeOfRow(code, { ...row, gtin: '09506000134353' })).toBe(false);
  });
});
