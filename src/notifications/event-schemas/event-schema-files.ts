import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventPayloadSchema, EventSchemas } from './event-schemas';
import { InvalidEventSchemaError, PayloadSchemas } from './payload-schemas';

// Every JSON file is a schema: one named after no event type (`loan_executed.json`) is refused, not silently left out.
const SCHEMA_FILE = /^(.+)\.json$/;

/**
 * Reads an event catalog from a folder: one `<EVENT_TYPE>.json` per type with a schema, holding
 * `{ "version": 1, "schema": { …JSON Schema 2020-12 of the payload… } }`; files not ending in `.json` (a README) are ignored. Every
 * schema is compiled here, so a bad one fails now: {@link InvalidEventSchemaError}, one line naming the file.
 *
 * @publicApi
 */
export function readEventSchemas(dir: string): EventSchemas {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (error) {
    throw new InvalidEventSchemaError(
      `Event schemas folder ${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const catalog: Record<string, EventPayloadSchema> = {};
  const files = new Map<string, string>();
  for (const name of names) {
    const type = SCHEMA_FILE.exec(name)?.[1];
    if (type === undefined) continue;
    const file = join(dir, name);
    try {
      catalog[type] = JSON.parse(readFileSync(file, 'utf8')) as EventPayloadSchema;
    } catch (error) {
      throw new InvalidEventSchemaError(`${file}: not JSON (${(error as Error).message.split('\n')[0]})`, type);
    }
    files.set(type, file);
  }
  try {
    PayloadSchemas.compile(catalog as EventSchemas);
  } catch (error) {
    if (!(error instanceof InvalidEventSchemaError) || error.eventType === undefined) throw error;
    throw new InvalidEventSchemaError(`${files.get(error.eventType)}: ${error.message}`, error.eventType);
  }
  return catalog as EventSchemas;
}
