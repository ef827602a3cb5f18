import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import {
  EVENT_TYPE_SCHEMA_DESCRIPTIONS,
  eventSchemaComponents,
  NOTIFICATIONS_OPTIONS,
  type NotificationsModuleOptions,
  WebhookEventBodyDto,
  webhookDocumentation,
} from '../index';
import { SERVICE_VERSION } from '../version';

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Notification webhook channel')
    .setDescription(
      'Per event type, users opt in to receive funding-automation events as signed HTTPS POSTs. ' +
        'Errors share one shape (ErrorResponseDto): `message` summarises, `errors[].field` names each bad input field.',
    )
    .setOpenAPIVersion('3.1.0')
    .setVersion(SERVICE_VERSION)
    .addServer('/', 'The origin the document is served from; a client given another base URL uses the same paths under it.')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'HS256 JWT; `sub` is the numeric user id.' })
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        description: 'The INTERNAL_API_TOKEN of service-to-service calls (20 wrong tokens per minute per address, then 429).',
      },
      'internal',
    )
    .build();
  // The event catalog the module was started with (EVENT_SCHEMAS_DIR): one webhook per event type, with its payload schema.
  const { eventSchemas = {} } = app.get<NotificationsModuleOptions>(NOTIFICATIONS_OPTIONS, { strict: false });
  const document = SwaggerModule.createDocument(
    app,
    { ...config, webhooks: webhookDocumentation(eventSchemas) },
    { extraModels: [WebhookEventBodyDto] },
  );
  Object.assign(document.components!.schemas!, eventSchemaComponents(eventSchemas));
  for (const [name, description] of Object.entries(EVENT_TYPE_SCHEMA_DESCRIPTIONS)) {
    const schema = document.components?.schemas?.[name];
    if (!schema) throw new Error(`OpenAPI: no ${name} schema to describe`);
    Object.assign(schema, { description });
  }
  return document;
}

/** JSON with every object's keys sorted, so the committed document diffs cleanly. */
export function stableJson(value: unknown): string {
  const sort = (node: unknown): unknown =>
    Array.isArray(node)
      ? node.map(sort)
      : node && typeof node === 'object'
        ? Object.fromEntries(
            Object.keys(node)
              .sort()
              .map((key) => [key, sort((node as Record<string, unknown>)[key])]),
          )
        : node;
  return `${JSON.stringify(sort(value), null, 2)}\n`;
}
