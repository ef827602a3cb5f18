import { createHmac } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Agent, type Dispatcher, request } from 'undici';
import { MAX_USER_ID } from '../../src/notifications/auth/user-id';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import {
  BUILT_IN_NAMES,
  type JsonSchema,
  loadOpenApiDocument,
  type OpenApiOperation,
  OpenApiSchemas,
  type RawBody,
  RESERVED_KEYS,
} from '../support/openapi-arbitraries';
import { TEST_JWT_SECRET } from '../support/test-app';
import { INTERNAL_API_TOKEN, INTERNAL_EVENTS_PATH, type TestAppWithKit } from '../support/test-app-with-kit';
import { SETTINGS } from '../support/settings-api';

/*
 * Property-based test of the HTTP contract (issue 12): every settings operation and the internal publish endpoint,
 * driven from the committed openapi.json with valid and mutated bodies, queries, path ids and tokens. For every
 * request: never a 5xx; only statuses the operation documents; every 4xx in the ErrorResponseDto shape (status and
 * reason phrase matching the response, no undeclared field); every 2xx matching the operation's response schema
 * (no undeclared field either); a bad token never gets a 2xx (a 401 on an otherwise well-formed request), a good one
 * never a 401; and a refused request changes nothing in the database: preferences, secrets and deliveries compared
 * row by row, the append-only events and attempts by count and last id (cheaper than every user's API views, and it
 * also sees rows of users the request should not reach).
 *
 * CI runs PROPERTY_RUNS (default below) cases per operation with the fixed seed; `npm run test:properties` runs 1000
 * per operation. PROPERTY_SEED replays another seed (fast-check prints the seed and path of a failure).
 * Rate limits are off (`rateLimits: false`) so that a 429 cannot hide what the request itself would get; the 429
 * shape is covered by test/contract/rate-limit.e2e-spec.ts. It runs on every TEST_DATABASE_KINDS (SQLite, and MariaDB in CI):
 * about 4 s per kind at the default count, 1 to 2.5 min per kind at 1000.
 */
const FIXED_SEED = 20_261_124;
const DEFAULT_RUNS = 40;
const RUNS = Number(process.env.PROPERTY_RUNS ?? DEFAULT_RUNS);
const SEED = process.env.PROPERTY_SEED === undefined ? FIXED_SEED : Number(process.env.PROPERTY_SEED);
const REPORT = process.env.PROPERTY_RUNS !== undefined;

/** The user whose state most requests touch, and a second one whose ids the first must not reach. */
const USER_A = 7001;
const USER_B = 7002;
const ENABLED_FOR_A = ['RATE_SPIKE', 'LOAN_EXECUTED'] as const;
const ENABLED_FOR_B = ['RATE_SPIKE'] as const;

/** Tables compared row by row around a refused request; the append-only ones by count and last id (kept cheap). */
const COMPARED_ROW_BY_ROW = new Set(['notification_preferences', 'webhook_signing_secrets', 'webhook_deliveries']);

const document = loadOpenApiDocument();
const operations = Object.entries(document.paths)
  .filter(([path]) => path.startsWith(SETTINGS) || path === INTERNAL_EVENTS_PATH)
  .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })));

// ---------------------------------------------------------------------------------------------- tokens

interface Credential {
  readonly label: string;
  /** The Authorization header, if any. */
  readonly authorization: string | undefined;
  /** true: must never get a 401; false: must never get a 2xx (and gets a 401 on a well-formed request); undefined: either. */
  readonly valid: boolean | undefined;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
function jwt(
  payload: object,
  { secret = TEST_JWT_SECRET, header = { alg: 'HS256', typ: 'JWT' } as object, algorithm = 'sha256' } = {},
): string {
  const signed = `${b64(header)}.${b64(payload)}`;
  return `${signed}.${createHmac(algorithm, secret).update(signed).digest('base64url')}`;
}
const now = () => Math.floor(Date.now() / 1000);
const claims = (sub: unknown, extra: object = {}) => ({ sub, iat: now() - 10, exp: now() + 3600, ...extra });

function userCredentials(): fc.Arbitrary<Credential> {
  const good = (label: string, token: string, valid: boolean | undefined = true): Credential => ({
    label,
    authorization: `Bearer ${token}`,
    valid,
  });
  const bad = (label: string, authorization: string | undefined): Credential => ({ label, authorization, valid: false });
  return fc.oneof(
    { arbitrary: fc.constant(good('user A', jwt(claims(String(USER_A))))), weight: 12 },
    { arbitrary: fc.constant(good('user B (another user)', jwt(claims(String(USER_B))))), weight: 2 },
    {
      arbitrary: fc.integer({ min: 1, max: MAX_USER_ID }).map((id) => good(`user ${id} (no settings)`, jwt(claims(id)))),
      weight: 1,
    },
    {
      arbitrary: fc.constantFrom(
        { label: 'lower-case scheme', authorization: `bearer ${jwt(claims(String(USER_A)))}`, valid: true },
        bad('no Authorization', undefined),
        bad('empty bearer', 'Bearer '),
        bad('Basic credentials', 'Basic dXNlcjpwYXNz'),
        bad('not a JWT', 'Bearer not-a-jwt'),
        bad('three garbage segments', 'Bearer a.b.c'),
        bad('token without scheme', jwt(claims(String(USER_A)))),
        bad('expired', `Bearer ${jwt(claims(String(USER_A), { iat: now() - 7200, exp: now() - 3600 }))}`),
        bad('not yet valid (nbf)', `Bearer ${jwt(claims(String(USER_A), { nbf: now() + 3600 }))}`),
        bad('wrong secret', `Bearer ${jwt(claims(String(USER_A)), { secret: 'another-secret-0123456789abcdef0123' })}`),
        bad('alg none', `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims(String(USER_A)))}.`),
        bad('HS512', `Bearer ${jwt(claims(String(USER_A)), { header: { alg: 'HS512', typ: 'JWT' }, algorithm: 'sha512' })}`),
        bad('no exp', `Bearer ${jwt({ sub: String(USER_A), iat: now() })}`),
        bad('crit header', `Bearer ${jwt(claims(String(USER_A)), { header: { alg: 'HS256', typ: 'JWT', crit: ['exp'] } })}`),
        bad('no sub', `Bearer ${jwt({ iat: now(), exp: now() + 3600 })}`),
        bad('internal token as user token', `Bearer ${INTERNAL_API_TOKEN}`),
        ...['alice', '-1', '1.5', '007', '0', '', String(MAX_USER_ID + 1), '1e3', ' 1'].map((sub) =>
          bad(`sub ${JSON.stringify(sub)}`, `Bearer ${jwt(claims(sub))}`),
        ),
        ...[null, -1, 1.5, 0, 1e21, [USER_A], { id: USER_A }, true].map((sub) =>
          bad(`sub ${JSON.stringify(sub)}`, `Bearer ${jwt(claims(sub))}`),
        ),
      ),
      weight: 5,
    },
  );
}

function internalCredentials(): fc.Arbitrary<Credential> {
  const bad = (label: string, authorization: string | undefined): Credential => ({ label, authorization, valid: false });
  return fc.oneof(
    {
      arbitrary: fc.constant<Credential>({ label: 'internal token', authorization: `Bearer ${INTERNAL_API_TOKEN}`, valid: true }),
      weight: 3,
    },
    {
      arbitrary: fc.constantFrom<Credential>(
        bad('no Authorization', undefined),
        bad('wrong token', 'Bearer wrong-token-0123456789abcdef0123456789'),
        bad('token plus a character', `Bearer ${INTERNAL_API_TOKEN}x`),
        bad('token less a character', `Bearer ${INTERNAL_API_TOKEN.slice(0, -1)}`),
        bad('user JWT', `Bearer ${jwt(claims(String(USER_A)))}`),
        bad('Basic credentials', `Basic ${Buffer.from(`internal:${INTERNAL_API_TOKEN}`).toString('base64')}`),
        bad('empty bearer', 'Bearer '),
        { label: 'token without scheme', authorization: INTERNAL_API_TOKEN, valid: undefined },
        { label: 'lower-case scheme', authorization: `bearer ${INTERNAL_API_TOKEN}`, valid: undefined },
      ),
      weight: 2,
    },
  );
}

// ---------------------------------------------------------------------------------------------- path ids and queries

interface PathValue {
  readonly label: string;
  /** As it goes into the URL (already encoded). */
  readonly segment: string;
  /** A path segment Express cannot decode: answered before authentication. */
  readonly malformed?: boolean;
}

function pathIds(
  fromSchema: fc.Arbitrary<unknown>,
  ownIds: () => readonly number[],
  otherIds: () => readonly number[],
): fc.Arbitrary<PathValue> {
  const id = (label: string, value: string | number): PathValue => ({ label, segment: encodeURIComponent(String(value)) });
  return fc.oneof(
    { arbitrary: fc.constantFrom(...ownIds()).map((value) => id(`own delivery ${value}`, value)), weight: 6 },
    { arbitrary: fc.constantFrom(...otherIds()).map((value) => id(`another user's delivery ${value}`, value)), weight: 2 },
    { arbitrary: fc.integer({ min: 1, max: MAX_USER_ID }).map((value) => id(`id ${value}`, value)), weight: 1 },
    { arbitrary: fromSchema.map((value) => id(`id ${JSON.stringify(value)} (from the schema)`, String(value))), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        ...[
          '0',
          '-1',
          '1.5',
          '1e3',
          '0x10',
          ' 12',
          '12 ',
          '+12',
          '012',
          'abc',
          'NaN',
          'Infinity',
          '٣',
          '2147483648',
          '9'.repeat(40),
          '%00',
          'null',
          '[1]',
        ].map((value) => id(`id ${JSON.stringify(value)}`, value)),
        { label: 'id "%"', segment: '%', malformed: true },
        { label: 'id "%zz"', segment: '%zz', malformed: true },
        { label: 'id "%E0%A4%A"', segment: '%E0%A4%A', malformed: true },
      ),
      weight: 3,
    },
  );
}

interface QueryValue {
  readonly label: string;
  readonly query: string;
}

function queries(schemas: OpenApiSchemas, parameters: ReadonlyArray<{ name: string; schema: JsonSchema }>): fc.Arbitrary<QueryValue> {
  const pair = (name: string, value: unknown) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`;
  const valid = fc
    .tuple(
      ...parameters.map(({ name, schema }) =>
        fc.option(
          schemas.arbitrary(schema).map((value) => pair(name, value)),
          { nil: undefined },
        ),
      ),
    )
    .map((pairs) => pairs.filter((value) => value !== undefined).join('&'));
  const names = parameters.map(({ name }) => name);
  const oddValues = [
    '',
    'abc',
    '0',
    '101',
    '1.5',
    '-1',
    '1e2',
    ' 5',
    '5 ',
    '0x10',
    '99999999999999999999999',
    'rate_spike',
    'DELIVERED,FAILED',
    'null',
    '[]',
  ];
  const mutated = fc.oneof(
    fc
      .tuple(valid, fc.constantFrom(...RESERVED_KEYS, ...BUILT_IN_NAMES, 'foo', 'offset', 'page'), fc.constantFrom('1', 'x', ''))
      .map(([query, name, value]) => ({
        label: `unknown query parameter ${name}`,
        query: [query, pair(name, value)].filter(Boolean).join('&'),
      })),
    fc
      .tuple(fc.constantFrom(...names), fc.constantFrom(...oddValues))
      .map(([name, value]) => ({ label: `${name}=${JSON.stringify(value)}`, query: pair(name, value) })),
    fc
      .constantFrom(...names)
      .map((name) => ({ label: `${name} given twice`, query: `${pair(name, 'RATE_SPIKE')}&${pair(name, 'PENDING')}` })),
    fc.constantFrom(...names).map((name) => ({ label: `${name}[] array syntax`, query: `${name}%5B%5D=1&${name}%5Bx%5D=2` })),
    fc.constant({ label: 'malformed percent-encoding', query: 'type=%E0%A4%A' }),
  );
  return fc.oneof(
    { arbitrary: valid.map((query) => ({ label: `valid query ${JSON.stringify(query)}`, query })), weight: 1 },
    { arbitrary: mutated, weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------- the property

interface Case {
  readonly credential: Credential;
  readonly id?: PathValue;
  readonly query?: QueryValue;
  readonly body?: RawBody;
}

const excerpt = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);

function describeCase(method: string, path: string, c: Case): string {
  return [
    `${method} ${path}`,
    `  token: ${c.credential.label}`,
    c.id && `  id: ${c.id.label}`,
    c.query && `  query: ${c.query.label}`,
    c.body && `  body: ${c.body.label}; Content-Type ${c.body.contentType ?? '(none)'}; ${excerpt(JSON.stringify(c.body.raw))}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** The case, printed readably by fast-check (a 1 MB body as its first characters). */
function printable(method: string, path: string, c: Case): Case {
  return Object.assign(c, { [fc.toStringMethod]: () => describeCase(method, path, c) });
}

const isSuccess = (status: number) => status >= 200 && status < 300;

describe('the generators and the checker agree on openapi.json', () => {
  const schemas = new OpenApiSchemas(document);
  it.each(Object.keys(document.components.schemas))('every generated %s passes the checker', (name) => {
    const schema = { $ref: `#/components/schemas/${name}` };
    fc.assert(
      fc.property(schemas.arbitrary(schema), (value) => {
        expect(schemas.check(schema, value)).toEqual([]);
      }),
      { seed: SEED, numRuns: 50 },
    );
  });

  it('the checker refuses what ErrorResponseDto does not allow', () => {
    const error = { $ref: '#/components/schemas/ErrorResponseDto' };
    expect(schemas.check(error, { statusCode: 400, error: 'Bad Request', message: 'm', errors: [{ field: 'f', message: 'm' }] })).toEqual(
      [],
    );
    expect(schemas.check(error, { statusCode: 400, error: 'Bad Request' })).toEqual(['$: required message is missing']);
    expect(schemas.check(error, { statusCode: '400', error: 'Bad Request', message: 'm' })).toEqual([
      '$.statusCode: string is not integer',
    ]);
    expect(schemas.check(error, { statusCode: 400, error: 'Bad Request', message: 'm', stack: 'at …' })).toEqual([
      '$: stack is not declared',
    ]);
    expect(schemas.check(error, { statusCode: 400, error: 'Bad Request', message: 'm', errors: [{ field: 'f' }] })).toEqual([
      '$.errors[0]: required message is missing',
    ]);
  });
});

describeEachDatabase('API properties from openapi.json on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { rateLimits: false });
  let agent: Agent;
  let origin: string;
  let ownIds: number[] = [];
  let otherIds: number[] = [];
  const outcomes = new Map<string, Map<string, number>>();

  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    agent = new Agent({ keepAliveTimeout: 10_000 });

    for (const type of ENABLED_FOR_A) await t.enableWebhook(USER_A, type, `/a/${type}`);
    for (const type of ENABLED_FOR_B) await t.enableWebhook(USER_B, type, `/b/${type}`);
    const event = (userId: number, type: string) => ({ userId, type, severity: 'INFO', title: 'Seed', body: 'Seed event' });
    await t
      .publish({ events: [...ENABLED_FOR_A, ...ENABLED_FOR_A].map((type) => event(USER_A, type)).concat(event(USER_B, 'RATE_SPIKE')) })
      .expect(202);
    await t.runScheduler();
    await t.settle();
    const ids = async (userId: number) =>
      (
        (await t.dataSource.query(`SELECT id FROM webhook_deliveries WHERE user_id = ${userId} ORDER BY id`)) as Array<{
          id: number | string;
        }>
      ).map(({ id }) => Number(id));
    ownIds = await ids(USER_A);
    otherIds = await ids(USER_B);
    expect(ownIds).toHaveLength(4);
    expect(otherIds).toHaveLength(1);
  });

  afterAll(async () => {
    if (REPORT) {
      for (const [operation, counts] of outcomes) {
        console.info(`${kind.name} ${operation}: ${[...counts].map(([status, n]) => `${status}×${n}`).join(' ')}`);
      }
    }
    await agent?.close();
  });

  /** Everything a refused request must leave as it was, once the deliveries already started have been recorded. */
  const snapshot = async () => {
    await t.runScheduler();
    await t.settle();
    t.receiver.clear();
    const state: Record<string, unknown> = {};
    for (const { tableName, primaryColumns } of t.dataSource.entityMetadatas) {
      const key = primaryColumns.map((column) => column.databaseName).join(', ');
      state[tableName] = COMPARED_ROW_BY_ROW.has(tableName)
        ? await t.dataSource.query(`SELECT * FROM ${tableName} ORDER BY ${key}`)
        : (
            (await t.dataSource.query(
              `SELECT COUNT(*) AS n, MAX(${primaryColumns[0].databaseName}) AS last FROM ${tableName}`,
            )) as Array<object>
          ).map((row) => JSON.stringify(Object.values(row).map(String)));
    }
    return state;
  };

  const send = async (method: string, url: string, c: Case) => {
    const headers: Record<string, string> = {};
    if (c.credential.authorization !== undefined) headers.authorization = c.credential.authorization;
    if (c.body?.contentType !== undefined) headers['content-type'] = c.body.contentType;
    // Without a body a state-changing request still says JSON, as clients must (docs/api.md: cross-site requests).
    if (c.body === undefined && method !== 'GET') headers['content-type'] = 'application/json';
    const response = await request(`${origin}${url}`, {
      method: method as Dispatcher.HttpMethod,
      headers,
      body: c.body ? Buffer.from(c.body.raw) : undefined,
      dispatcher: agent,
    });
    const text = await response.body.text();
    return { status: response.statusCode, headers: response.headers, text };
  };

  for (const { path, method, operation } of operations) {
    it(`${method} ${path}`, { timeout: Math.max(120_000, RUNS * 1_500) }, async () => {
      const schemas = new OpenApiSchemas(document, hints(t));
      const arbitrary = caseArbitrary(
        schemas,
        method,
        path,
        operation,
        () => ownIds,
        () => otherIds,
      );
      const counts = new Map<string, number>();
      outcomes.set(`${method} ${path}`, counts);

      await fc.assert(
        fc.asyncProperty(arbitrary, async (c) => {
          const url = urlOf(path, c);
          const before = await snapshot();
          const response = await send(method, url, c);
          const { status } = response;
          counts.set(String(status), (counts.get(String(status)) ?? 0) + 1);
          const problems = checkResponse(schemas, operation, c, response);
          if (status >= 400 && status < 500) {
            const after = await snapshot();
            problems.push(...changesBetween(before, after).map((change) => `the refused request changed the database: ${change}`));
          }
          if (problems.length > 0) {
            throw new Error(
              `${describeCase(method, url, c)}\n→ ${status} ${excerpt(response.text, 600)}\n${problems.map((p) => `  - ${p}`).join('\n')}`,
            );
          }
        }),
        // CI stops at the first failure; a larger run also shrinks it to a smaller reproduction.
        { seed: SEED, numRuns: RUNS, endOnFailure: RUNS <= DEFAULT_RUNS },
      );

      // Not vacuous: the generators reached both the operation's success and its refusals.
      const statuses = [...counts.keys()].map(Number);
      expect(statuses.some(isSuccess), `no 2xx in ${RUNS} runs: ${[...counts].join(' ')}`).toBe(true);
      expect(
        statuses.some((status) => status >= 400),
        `no 4xx in ${RUNS} runs`,
      ).toBe(true);
    });
  }
});

/** Property values that make success reachable: the receiver's URL, the types that have a webhook, the seeded users. */
function hints(t: TestAppWithKit) {
  const configuredType = (own: fc.Arbitrary<unknown>) =>
    fc.oneof({ arbitrary: fc.constantFrom(...ENABLED_FOR_A), weight: 3 }, { arbitrary: own, weight: 1 });
  return {
    // Most schema-valid settings bodies are refused for how their fields combine (a URL on EMAIL, WEBHOOK enabled
    // without one): half of them are made coherent so that the 200 path is driven as hard as the refusals.
    UpsertPreferenceDto: (own: fc.Arbitrary<unknown>) =>
      fc.oneof(
        own,
        fc.record(
          {
            type: fc.constantFrom(...ENABLED_FOR_A, 'RATE_DROP', 'DAILY_DIGEST'),
            channel: fc.constant('WEBHOOK'),
            enabled: fc.boolean(),
            webhookUrl: fc.constantFrom(t.receiver.url('/a/put'), t.receiver.url('/a/other')),
            signatureSchemes: fc.constantFrom(['hmac'], ['ed25519'], ['ed25519', 'hmac']),
          },
          { requiredKeys: ['type', 'channel', 'enabled', 'webhookUrl'] },
        ),
        fc.record({
          type: fc.constantFrom(...ENABLED_FOR_A, 'RATE_DROP'),
          channel: fc.constantFrom('IN_APP', 'EMAIL'),
          enabled: fc.boolean(),
        }),
      ),
    // Most schema-valid windows are refused for how since and until combine (in the future, reversed, over 90 days).
    RecoverDeliveriesDto: (own: fc.Arbitrary<unknown>) =>
      fc.oneof(
        own,
        fc.record(
          { since: fc.constant(new Date(t.clock.now() - 3_600_000).toISOString()), type: configuredType(fc.constant('RATE_SPIKE')) },
          { requiredKeys: ['since'] },
        ),
      ),
    'UpsertPreferenceDto.type': configuredType,
    'RotateSecretDto.type': configuredType,
    'RotateSigningKeyDto.type': configuredType,
    'TestSendDto.type': configuredType,
    'UpsertPreferenceDto.webhookUrl': (own: fc.Arbitrary<unknown>) =>
      fc.oneof(
        { arbitrary: fc.constantFrom(t.receiver.url('/a/put'), t.receiver.url('/a/other')), weight: 4 },
        { arbitrary: fc.constant(null), weight: 1 },
        { arbitrary: own, weight: 1 },
        {
          arbitrary: fc.constantFrom(
            'http://receiver.test/hook',
            'https://169.254.169.254/latest/meta-data',
            'https://10.0.0.1/hook',
            'https://[::1]/hook',
            'https://user:password@receiver.test/hook',
            'https://evil.example\\@127.0.0.1/',
            'https://receiver.test:0/hook',
            'https://receiver.test/a b',
            'https://receiver.test/\r\nX-Injected: 1',
            'javascript:alert(1)',
            '',
          ),
          weight: 1,
        },
      ),
    'PublishEventDto.userId': (own: fc.Arbitrary<unknown>) =>
      fc.oneof(
        { arbitrary: fc.constantFrom(USER_A, USER_B), weight: 4 },
        { arbitrary: fc.integer({ min: 1, max: MAX_USER_ID }), weight: 1 },
        { arbitrary: own, weight: 1 },
      ),
  };
}

function caseArbitrary(
  schemas: OpenApiSchemas,
  method: string,
  path: string,
  operation: OpenApiOperation,
  ownIds: () => readonly number[],
  otherIds: () => readonly number[],
): fc.Arbitrary<Case> {
  const internal = operation.security?.some((requirement) => 'internal' in requirement) ?? false;
  const parts: Record<string, fc.Arbitrary<unknown>> = { credential: internal ? internalCredentials() : userCredentials() };
  const parameters = operation.parameters ?? [];
  const pathParameter = parameters.find((parameter) => parameter.in === 'path');
  if (pathParameter) parts.id = pathIds(schemas.arbitrary(pathParameter.schema), ownIds, otherIds);
  const queryParameters = parameters.filter((parameter) => parameter.in === 'query');
  if (queryParameters.length > 0) parts.query = queries(schemas, queryParameters);
  else {
    // Declares no query: now and then one it does not declare (docs/api.md: an undeclared query key is refused too).
    parts.query = fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 5 },
      {
        arbitrary: fc
          .constantFrom('type=RATE_SPIKE', 'limit=5', 'foo=1', 'valueOf=1', '__proto__=1', 'constructor%5Bprototype%5D=1')
          .map((query) => ({ label: `undeclared query ${query}`, query })),
        weight: 1,
      },
    );
  }
  const bodySchema = operation.requestBody?.content['application/json']?.schema;
  if (bodySchema) parts.body = schemas.bodies(bodySchema, 1);
  else if (operation.responses['415']) {
    // Takes no body but documents 413/415 for one: mostly none, sometimes one of each kind.
    parts.body = fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 2 },
      { arbitrary: schemas.mutatedBodies({ type: 'object', properties: {}, additionalProperties: true }), weight: 1 },
    );
  }
  return fc.record(parts).map((c) => printable(method, path, c as unknown as Case));
}

/** Per table, what differs between two snapshots: the first differing row of each side (or the counts). */
function changesBetween(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const changes: string[] = [];
  for (const table of Object.keys(before)) {
    const [was, is] = [before[table] as unknown[], after[table] as unknown[]];
    if (JSON.stringify(was) === JSON.stringify(is)) continue;
    const index = was.findIndex((row, i) => JSON.stringify(row) !== JSON.stringify(is[i]));
    const at = index === -1 ? was.length : index;
    changes.push(`${table}: ${was.length} → ${is.length} rows; row ${at} was ${JSON.stringify(was[at])}, is ${JSON.stringify(is[at])}`);
  }
  return changes;
}

function urlOf(path: string, c: Case): string {
  const withId = path.replace('{id}', c.id?.segment ?? '');
  return c.query?.query ? `${withId}?${c.query.query}` : withId;
}

function checkResponse(
  schemas: OpenApiSchemas,
  operation: OpenApiOperation,
  c: Case,
  response: { status: number; headers: Record<string, string | string[] | undefined>; text: string },
): string[] {
  const { status, headers, text } = response;
  const problems: string[] = [];
  if (status >= 500) problems.push(`a ${status}: never a 5xx`);
  const documented = operation.responses[String(status)];
  if (!documented) problems.push(`${status} is not a status this operation documents (${Object.keys(operation.responses).join(', ')})`);

  const contentType = String(headers['content-type'] ?? '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    problems.push(`the body is not JSON (Content-Type ${contentType || 'none'})`);
    return problems;
  }
  if (!/^application\/json\b/.test(contentType)) problems.push(`Content-Type ${contentType || 'none'}, not application/json`);

  if (status >= 400) {
    problems.push(...schemas.check({ $ref: '#/components/schemas/ErrorResponseDto' }, body).map((p) => `error shape: ${p}`));
    const error = body as { statusCode?: unknown; error?: unknown; message?: unknown };
    if (error.statusCode !== status) problems.push(`statusCode ${JSON.stringify(error.statusCode)} is not the response status ${status}`);
    if (error.error !== STATUS_CODES[status])
      problems.push(`error ${JSON.stringify(error.error)} is not the reason phrase "${STATUS_CODES[status]}"`);
    if (typeof error.message !== 'string' || error.message.length === 0) problems.push('message is empty');
    if ((status === 429 || status === 503) && headers['retry-after'] === undefined) problems.push(`a ${status} without Retry-After`);
  } else if (isSuccess(status)) {
    const schema = documented?.content?.['application/json']?.schema;
    if (!schema) problems.push(`no response schema documented for ${status}`);
    else problems.push(...schemas.check(schema, body).map((p) => `response schema: ${p}`));
    const result = body as { eventIds?: unknown[] };
    if (c.body && Array.isArray(result.eventIds)) {
      const sent = JSON.parse(c.body.raw.replace(/^\uFEFF/, '')) as { events?: unknown[] };
      const expected = Array.isArray(sent.events) ? sent.events.length : 1;
      if (result.eventIds.length !== expected) problems.push(`${result.eventIds.length} event ids for ${expected} event(s)`);
    }
  }

  const wellFormed = (c.body === undefined || c.body.label === 'valid') && !c.id?.malformed;
  if (c.credential.valid === false && isSuccess(status)) problems.push(`a ${status} for a bad token (${c.credential.label})`);
  if (c.credential.valid === false && wellFormed && status !== 401)
    problems.push(`a ${status}, not 401, for a bad token on a well-formed request`);
  if (c.credential.valid === true && status === 401) problems.push('a 401 for a valid token');
  return problems;
}
