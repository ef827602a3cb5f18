import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Operation {
  requestBody?: unknown;
  responses: Record<string, { content?: { 'application/json'?: { schema?: { $ref?: string } } } }>;
}

// The committed document is what frontend teams generate their client from (a test keeps it in sync with the code).
const document = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(document.paths)
  .filter(([path]) => path.startsWith('/api/v1/'))
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, operation })),
  );

describe('the one error shape in the OpenAPI document', () => {
  it('covers every API operation', () => {
    expect(operations.length).toBeGreaterThanOrEqual(8);
  });

  it.each(operations)('$name declares every error response with ErrorResponseDto', ({ operation }) => {
    const errors = Object.entries(operation.responses).filter(([status]) => Number(status) >= 400);
    expect(errors.length).toBeGreaterThan(0);
    for (const [status, response] of errors) {
      expect({ status, schema: response.content?.['application/json']?.schema?.$ref }).toEqual({
        status,
        schema: '#/components/schemas/ErrorResponseDto',
      });
    }
  });

  it.each(operations)('$name declares 401 and 500', ({ operation }) => {
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '500']));
  });

  it.each(operations.filter(({ operation }) => operation.requestBody))(
    '$name, which takes a body, declares 400, 413 and 415',
    ({ operation }) => {
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '413', '415']));
    },
  );

  it.each(operations.filter(({ path }) => path.startsWith('/api/v1/settings/')))(
    '$name, a rate-limited settings operation, declares 429',
    ({ operation }) => {
      expect(Object.keys(operation.responses)).toContain('429');
    },
  );

  it.each(operations.filter(({ path }) => path.includes('{id}')))('$name, which takes an id, declares 400 and 404', ({ operation }) => {
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '404']));
  });
});
