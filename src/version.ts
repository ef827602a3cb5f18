import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The package version; this file sits one level below package.json both in src/ and in dist/. */
export const SERVICE_VERSION: string = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version;
