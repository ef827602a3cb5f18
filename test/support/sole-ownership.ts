import type { Clock } from '../../src/notifications/clock/clock';
import type { DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import { PartitionLeases } from '../../src/notifications/delivery/partitions/partition-leases';
import { PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';

/** Partition leases of a database only one process delivers from: no statement is ever made. */
class SoleDeliverer extends PartitionLeases {
  readonly shared = false;
  heartbeat(): never {
    throw new Error('a sole deliverer keeps no partition leases');
  }
  renew(): never {
    return this.heartbeat();
  }
  take(): never {
    return this.heartbeat();
  }
  release(): never {
    return this.heartbeat();
  }
  leave(): never {
    return this.heartbeat();
  }
  keepCircuit(): never {
    return this.heartbeat();
  }
  circuitsOf(): never {
    return this.heartbeat();
  }
  wakeUrls(): never {
    return this.heartbeat();
  }
}

/**
 * The ownership of an engine a test builds by hand, beside or without the app's: it owns every partition, as the one
 * delivering process on SQLite does, whatever the database (the test is about leases, not partitions).
 */
export function soleOwnership(clock: Clock, settings: DeliverySettings): PartitionOwnership {
  return new PartitionOwnership(new SoleDeliverer(), clock, settings);
}
