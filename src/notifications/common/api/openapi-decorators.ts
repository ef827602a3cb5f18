import type * as Swagger from '@nestjs/swagger';

/**
 * `@nestjs/swagger`, an optional peer dependency, when the app has it: its decorators then describe the module's
 * endpoints in the app's own Swagger document (and in this repository's openapi.json). Without it they record nothing:
 * only `SwaggerModule` reads what they record, and an app without `@nestjs/swagger` has none. The module's code imports
 * them from here, never from `@nestjs/swagger` itself (`.ci/check-package.sh` requires the package without it).
 */
function installedSwagger(): typeof Swagger | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer: loaded only where installed
    return require('@nestjs/swagger') as typeof Swagger;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (error as Error).message.includes("'@nestjs/swagger'");
    if (missing) return undefined;
    throw error;
  }
}

const recordsNothing = () => () => undefined;

/** Stands in for `@nestjs/swagger`: every decorator records nothing; `getSchemaPath` gives the same reference. */
const withoutSwagger = new Proxy({} as typeof Swagger, {
  get: (_target, name) =>
    name === 'getSchemaPath'
      ? (model: string | { name: string }) => `#/components/schemas/${typeof model === 'string' ? model : model.name}`
      : recordsNothing,
});

export const {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiExcludeController,
  ApiExtraModels,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  getSchemaPath,
} = installedSwagger() ?? withoutSwagger;
