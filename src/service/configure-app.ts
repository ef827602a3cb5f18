import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ApiExceptionFilter, corsOptionsFor } from '../index';
import { buildOpenApiDocument } from './openapi';

export const JSON_BODY_LIMIT = '1mb';

/**
 * The API docs page's policy: Swagger UI's scripts and styles from this origin only (its inline `<style>` blocks need
 * 'unsafe-inline' for styles; no inline script runs), the document fetched from here, nothing framed, posted or based elsewhere.
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Process-wide HTTP set-up of the standalone service, shared by main.ts and the e2e tests. */
export function configureApp(
  app: NestExpressApplication,
  http: { readonly corsOrigins?: readonly string[]; readonly apiDocs?: boolean } = {},
): NestExpressApplication {
  // Every answer is JSON (or the docs): no browser may sniff it into something it runs.
  app.use((_request: Request, response: Response, next: NextFunction) => {
    response.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  if (http.corsOrigins?.length) app.enableCors(corsOptionsFor(http.corsOrigins));
  app.useLogger(app.get(Logger));
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT });
  app.useGlobalFilters(new ApiExceptionFilter());
  app.disable('x-powered-by');
  if (http.apiDocs ?? true) {
    app.use('/api/docs', (_request: Request, response: Response, next: NextFunction) => {
      response.setHeader('Content-Security-Policy', API_DOCS_CSP);
      next();
    });
    SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'api/docs-json' });
  }
  return app;
}
