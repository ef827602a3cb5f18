import { Column, Entity, PrimaryColumn } from 'typeorm';
import { epochMs } from '../common/database/epoch-ms.transformer';

/**
 * The request slots of an endpoint (a user's host), all instances together: an attempt takes one before its request and
 * frees it when the answer arrives, so an endpoint never has more than `perEndpointConcurrency` requests in flight
 * however many instances deliver. Rows are made the first time an endpoint is sent to (one per slot, a few dozen bytes
 * each) and kept; a slot whose holder died frees itself when the holder's lease ends (`held_until`).
 */
@Entity({ name: 'webhook_endpoint_slots' })
export class WebhookEndpointSlot {
  /** The endpoint key: the user id and the URL's host (`42 hooks.example.com:8443`). */
  @PrimaryColumn({ type: 'varchar', length: 300 })
  endpoint: string;

  /** 0 to `perEndpointConcurrency` − 1. */
  @PrimaryColumn({ type: 'integer' })
  slot: number;

  /** The token of the take that holds it; null when free. */
  @Column({ type: 'varchar', length: 36, nullable: true })
  holder: string | null;

  /** Held until this time (epoch ms) at most; 0 once released (free for every instance, whatever its clock). */
  @Column({ name: 'held_until', type: 'bigint', default: 0, transformer: epochMs })
  heldUntil: number;
}
