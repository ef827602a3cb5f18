import { existsSync } from 'node:fs';
import { loadAppConfig } from '../config/load-app-config';
import { signUserToken } from '../notifications/auth/jwt-user-resolver';
import { parseUserId } from '../notifications/auth/user-id';

if (existsSync('.env')) process.loadEnvFile('.env');
const userId = parseUserId(process.argv[2]);
if (userId === undefined) {
  console.error('Usage: npm run token -- <userId>   (a positive integer)');
  process.exit(1);
}
console.log(signUserToken(loadAppConfig().jwtSecret, userId));
