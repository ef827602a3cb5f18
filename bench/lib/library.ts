// The service under test is the built package (`npm run build`), exactly what `node dist/service/main.js` and host
// apps run; types come from the sources. The bench uses its public surfaces (the library entry, the standalone
// AppModule and its env configuration) and, for scheduler runs, the built internal DeliveryScheduler.
import { join } from 'node:path';
import { ROOT } from './paths';

export const DIST = join(ROOT, 'dist');

export type Library = typeof import('../../src/index');
export const library = (): Library => require(`${DIST}/index.js`) as Library;
