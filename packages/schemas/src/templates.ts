import type { SchemaDefinition } from './field-definition.ts';

export interface SchemaTemplate extends SchemaDefinition {
  id: string;
  name: string;
  vertical: string;
}

/**
 * Read-only starting points every account can copy (POST /schemas with copyFrom). Field names
 * follow what each trade already calls things.
 */
export const schemaTemplates: readonly SchemaTemplate[] = [
  {
    id: 'tpl_pharma_dscsa',
    name: 'Pharmaceutical package (DSCSA product identifier)',
    vertical: 'pharmaceuticals',
    fields: [
      { name: 'ndc', type: 'string', required: true, description: 'National Drug Code' },
      { name: 'productName', type: 'string', required: true },
      { name: 'dosageForm', type: 'string' },
      { name: 'strength', type: 'string' },
      { name: 'packageSize', type: 'string' },
      { name: 'lot', type: 'string', required: true, description: 'DSCSA product identifier: lot' },
      { name: 'expirationDate', type: 'date', required: true, description: 'DSCSA product identifier: expiration' },
      { name: 'manufacturer', type: 'string', required: true },
      { name: 'labeler', type: 'string' },
      {
        name: 'storage',
        type: 'object',
        fields: [
          { name: 'minCelsius', type: 'number' },
          { name: 'maxCelsius', type: 'number' },
        ],
      },
    ],
  },
  {
    id: 'tpl_luxury_goods',
    name: 'Luxury goods item',
    vertical: 'luxury',
    fields: [
      { name: 'brand', type: 'string', required: true },
      { name: 'name', type: 'string', required: true },
      { name: 'collection', type: 'string' },
      { name: 'model', type: 'string' },
      { name: 'materials', type: 'array', items: 'string' },
      { name: 'colour', type: 'string' },
      { name: 'madeIn', type: 'string' },
      { name: 'craftedOn', type: 'date' },
      {
        name: 'limitedEdition',
        type: 'object',
        fields: [
          { name: 'number', type: 'integer', required: true },
          { name: 'of', type: 'integer', required: true },
        ],
      },
    ],
  },
  {
    id: 'tpl_wine_spirits',
    name: 'Wine and spirits bottle',
    vertical: 'wine-spirits',
    fields: [
      { name: 'name', type: 'string', required: true },
      { name: 'producer', type: 'string', required: true },
      { name: 'appellation', type: 'string' },
      { name: 'vintage', type: 'integer' },
      { name: 'grapeVarieties', type: 'array', items: 'string' },
      { name: 'alcoholByVolume', type: 'number', required: true },
      { name: 'volumeMl', type: 'integer', required: true },
      { name: 'bottledOn', type: 'date' },
      { name: 'caskNumber', type: 'string' },
    ],
  },
];
