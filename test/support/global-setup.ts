import { createConnection } from 'mysql2/promise';

/** With TEST_MYSQL_URL set, an unreachable server fails the run at once instead of skipping MySQL. */
export default async function globalSetup(): Promise<void> {
  const url = process.env.TEST_MYSQL_URL;
  if (!url) return;
  try {
    const connection = await createConnection({ uri: url, connectTimeout: 5000 });
    await connection.query('SELECT 1');
    await connection.end();
  } catch (error) {
    throw new Error(
      `TEST_MYSQL_URL is set to ${url}, but that MySQL/MariaDB server is unreachable (${(error as Error).message}). ` +
        'Start it (start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd) or unset TEST_MYSQL_URL.',
    );
  }
}
