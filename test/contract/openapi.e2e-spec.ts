import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument, stableJson } from '../../src/service/openapi';
import { generateOpenApiTypes, OPENAPI_TYPES_FILE } from '../../src/service/scripts/openapi-types';
import { appPerSuite } from '../support/each-database';
import { TEST_DATABASE_KINDS } from '../support/test-databases';

describe('OpenAPI document', () => {
  const t = appPerSuite(TEST_DATABASE_KINDS[0]);

  it('matches the committed openapi.json (run `npm run openapi` after changing the API)', () => {
    const committed = readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8');
    expect(stableJson(buildOpenApiDocument(t.app))).toBe(committed);
  });

  it(`has committed TypeScript types, ${OPENAPI_TYPES_FILE}, matching it (run \`npm run openapi\` after changing the API)`, async () => {
    const committed = readFileSync(join(__dirname, '..', '..', OPENAPI_TYPES_FILE), 'utf8');
    const document = JSON.parse(stableJson(buildOpenApiDocument(t.app)));
    expect(await generateOpenApiTypes(document)).toBe(committed);
  });

  it('is served at /api/docs-json and documents the secret field, the error shape and the bearer scheme', async () => {
    const { body } = await t.http().get('/api/docs-json').expect(200);
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/settings/notifications', '/api/v1/settings/notifications/effective']),
    );
    expect(body.components.schemas.UpsertPreferenceResponseDto.properties).toHaveProperty('webhookSecret');
    expect(body.components.schemas.ErrorResponseDto.required).toEqual(['statusCode', 'error', 'message']);
    expect(body.components.schemas.EventType.enum).toHaveLength(29);
    expect(body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const put = body.paths['/api/v1/settings/notifications'].put;
    expect(Object.keys(put.responses).sort()).toEqual(['200', '400', '401', '413', '415', '429', '500']);
  });
});
