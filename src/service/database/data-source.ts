import { DataSource } from 'typeorm';
import { loadAppConfig } from '../config/load-app-config';
import { databaseOptions } from './database-options';

/** For the TypeORM CLI: `npx typeorm migration:run -d dist/service/database/data-source.js`. */
export default new DataSource(databaseOptions(loadAppConfig().database));
