import openapiTS, { astToString } from 'openapi-typescript';

export const OPENAPI_TYPES_FILE = 'src/generated/openapi-types.ts';

const HEADER = `/**
 * TypeScript types of the HTTP API, generated from openapi.json by \`npm run openapi\` (openapi-typescript).
 * Do not edit: a test fails while this file is stale. Import them from '@funding/notification-webhooks/openapi-types'.
 */

`;

/** The types of {@link OPENAPI_TYPES_FILE} for an OpenAPI document (parse the committed, key-sorted JSON). */
export async function generateOpenApiTypes(document: object): Promise<string> {
  const nodes = await openapiTS(document as Parameters<typeof openapiTS>[0], { enum: false, exportType: false, alphabetize: true });
  return HEADER + astToString(nodes);
}
