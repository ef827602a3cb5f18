import type { ServerResponse } from 'node:http';

/**
 * How the test receiver answers a request:
 * - `{ status, headers, body, delayMs }`: a normal response (default `{ status: 204 }`), after `delayMs` if given
 *   (more than 5000 makes the module's attempt time out);
 * - `'hang'`: read the request, never answer (the socket is destroyed by `close()`);
 * - `'reset'`: send a 200 status line, headers announcing a longer body and a few bytes of it, then reset the TCP
 *   connection (RST) mid-response;
 * - `{ redirectTo, status? }`: answer 302 (or the given 3xx) with that Location; the module never follows it.
 */
export type ReceiverBehaviour =
  | { status?: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | 'hang'
  | 'reset'
  | { redirectTo: string; status?: number };

export function answer(behaviour: ReceiverBehaviour, res: ServerResponse, reset: () => void): void {
  if (behaviour === 'hang') return;
  if (behaviour === 'reset') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
    res.write('partial', reset);
    return;
  }
  if ('redirectTo' in behaviour) {
    res.writeHead(behaviour.status ?? 302, { location: behaviour.redirectTo, 'content-length': '0' });
    res.end();
    return;
  }
  const respond = () => {
    if (res.destroyed) return;
    res.writeHead(behaviour.status ?? 204, behaviour.headers);
    res.end(behaviour.body);
  };
  if (behaviour.delayMs) setTimeout(respond, behaviour.delayMs).unref();
  else respond();
}
