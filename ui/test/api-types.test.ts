// The UI's types generator (scripts/api-types.mjs) types a struct the server builds from flattened
// groups of fields as the one object the wire sends.
import { describe, expect, it } from 'vitest';
// @ts-expect-error the script is plain JS
import { mergeInlineAllOf, typesFor } from '../scripts/api-types.mjs';

const texts = { type: 'object', required: ['name_en'], properties: { name_en: { type: 'string' } } };
const rest = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, health: { type: ['string', 'null'] } } };

describe('api types', () => {
  it('merges an allOf of written-out objects, wherever it is, and keeps an allOf with a named part', () => {
    const doc = {
      components: {
        schemas: {
          OpsApp: { description: 'An app', allOf: [structuredClone(texts), structuredClone(rest)] },
          AppDetails: { allOf: [{ $ref: '#/components/schemas/App' }, structuredClone(rest)] },
          Envelope: { type: 'object', properties: { data: { allOf: [structuredClone(texts), structuredClone(rest)] } } },
        },
      },
    };
    mergeInlineAllOf(doc);
    const merged = { type: 'object', properties: { name_en: { type: 'string' }, id: { type: 'string' }, health: { type: ['string', 'null'] } }, required: ['name_en', 'id'] };
    expect(doc.components.schemas.OpsApp).toEqual({ description: 'An app', ...merged });
    expect(doc.components.schemas.Envelope.properties.data).toEqual(merged);
    expect(doc.components.schemas.AppDetails.allOf).toHaveLength(2);
  });

  it('types the merged object as one', async () => {
    const doc = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {}, components: { schemas: { OpsApp: { allOf: [texts, rest] } } } };
    const ts: string = await typesFor(doc);
    expect(ts).toContain('OpsApp: {');
    expect(ts).not.toContain('} & {');
    expect(ts).toMatch(/health\?: string \| null;/);
    expect(ts).toMatch(/name_en: string;/);
  });
});
