import { collectDefaultMetrics, Registry } from 'prom-client';

/** The standalone service's registry: Node process metrics, plus what NotificationsModule registers on it. */
export function serviceMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
