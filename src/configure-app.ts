import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ApiExceptionFilter, corsOptionsFor } from './index';
import { buildOpenApiDocument } from './openapi';

export const JSON_BODY_LIMIT = '1mb';

/** Process-wide HTTP set-up of the standalone service, shared by main.ts and the e2e tests. */
export function configureApp(app: NestExpressApplication, http: { readonly corsOrigins?: readonly string[] } = {}): NestExpressApplication {
  if (http.corsOrigins?.length) app.enableCors(corsOptionsFor(http.corsOrigins));
  app.useLogger(app.get(Logger));
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  app.useGlobalFilters(new ApiExceptionFilter());
  app.disable('x-powered-by');
  SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'api/docs-json' });
  return app;
}
