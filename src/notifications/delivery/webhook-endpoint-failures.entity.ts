import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * An endpoint's unreachable attempts in a row, all instances together: the per-endpoint cap spreads its attempts over
 * the instances, so each one's own count would take that many times longer to reach the circuit's threshold. A row
 * lives from an endpoint's first failure to the next answer seen by an instance that saw failures (a few dozen bytes).
 */
@Entity({ name: 'webhook_endpoint_failures' })
export class WebhookEndpointFailures {
  /** The endpoint key: the user id and the URL's host (`42 hooks.example.com:8443`). */
  @PrimaryColumn({ type: 'varchar', length: 300 })
  endpoint: string;

  @Column({ type: 'integer' })
  failures: number;
}
