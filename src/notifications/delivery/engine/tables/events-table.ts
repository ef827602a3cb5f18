import type { EntityManager } from 'typeorm';
import { traceColumns } from '../../trace-context/stored-trace-context';
import type { NewEvent } from '../outbox-store';
import { insertRows } from './sql-rows';

/** `webhook_events`: each event's exact body and trace context, written once (retention deletes them). */
export function insertEventRows(manager: EntityManager, events: readonly NewEvent[], now: number): Promise<unknown> {
  return insertRows(
    manager,
    'webhook_events',
    ['id', 'user_id', 'type', 'body', 'traceparent', 'tracestate', 'created_at'],
    events.map((e) => [e.id, e.userId, e.type, e.body, ...traceColumns(e.trace), now]),
  );
}
