import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';

/** A fresh database on the TEST_MYSQL_URL server, dropped by `drop()`. */
export async function createMysqlTestDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `host_app_${randomBytes(6).toString('hex')}`;
  const admin = await createConnection({ uri: serverUrl });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const connection = await createConnection({ uri: serverUrl });
      await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await connection.end();
    },
  };
}
