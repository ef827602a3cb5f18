import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from '../app.module';
import { DbType } from '../config/environment-variables';
import type { AppConfig } from '../config/load-app-config';
import { NodeEnv } from '../config/environment-variables';
import { buildOpenApiDocument, stableJson } from '../openapi';
import { generateOpenApiTypes, OPENAPI_TYPES_FILE } from './openapi-types';

// Any valid config will do: the document depends on the code only.
const config: AppConfig = {
  nodeEnv: NodeEnv.development,
  port: 0,
  database: { type: DbType.sqlite, path: ':memory:' },
  notifications: {
    jwtSecret: 'x'.repeat(32),
    encryptionKeys: [{ id: 'openapi', key: Buffer.alloc(32) }],
    serviceSite: 'https://funding.example.com',
  },
};

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forConfig(config), { logger: false });
  const root = join(__dirname, '..', '..', '..');
  const document = stableJson(buildOpenApiDocument(app));
  await app.close();
  writeFileSync(join(root, 'openapi.json'), document);
  writeFileSync(join(root, OPENAPI_TYPES_FILE), await generateOpenApiTypes(JSON.parse(document)));
  console.log(`Wrote openapi.json and ${OPENAPI_TYPES_FILE}`);
}

void main();
