import { createConnection } from 'mysql2/promise';

/** Creates the empty database `name` on the MySQL/MariaDB server at `serverUrl`: its URL, and how to drop it. */
export async function createMysqlDatabase(serverUrl: string, name: string): Promise<{ url: string; drop(): Promise<void> }> {
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
