import { Column, Entity, PrimaryColumn } from 'typeorm';
import { epochMs } from '../common/database/epoch-ms.transformer';

/**
 * Who may probe an endpoint whose circuit is open, all instances together: the half-open probe is one request per
 * endpoint (a user's host), not one per instance. A row lives while a probe runs and after one failed (a few dozen
 * bytes per user and host); it is deleted when a probe gets an answer.
 */
@Entity({ name: 'webhook_endpoint_probes' })
export class WebhookEndpointProbe {
  /** The endpoint key: the user id and the URL's host (`42 hooks.example.com:8443`). */
  @PrimaryColumn({ type: 'varchar', length: 300 })
  endpoint: string;

  /** No other probe before this time (epoch ms): the running probe's deadline, or the cool-down after a failed one. */
  @Column({ name: 'next_probe_at', type: 'bigint', transformer: epochMs })
  nextProbeAt: number;

  /** The running probe's own token (null after a failed one): only its holder ends it. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  holder: string | null;
}
