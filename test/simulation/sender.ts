import { isUnreachable } from '../../src/notifications/delivery/engine/circuit-breaker';
import { endpointKeyOf } from '../../src/notifications/delivery/engine/endpoint-queues';
import type { ClaimedDelivery } from '../../src/notifications/delivery/engine/outbox-store';
import type { AttemptResult, WebhookRequest } from '../../src/notifications/delivery/http/attempt-result';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import type { CircuitOpenings } from './circuit-openings';
import type { EgressFaults } from './egress-faults';
import { pause, type ProcessWorld } from './process-faults';
import { networkUnreachable, type Receivers } from './receivers';
import type { SendChecks } from './send-checks';
import type { Instance } from './world-model';

/** What an instance's sender needs of the world. */
export interface SenderWorld extends ProcessWorld {
  readonly faults: { readonly pauseAtSend: number };
  readonly egress: EgressFaults;
  readonly receivers: Receivers;
  readonly sendChecks: SendChecks;
  readonly circuits: CircuitOpenings;
  /** Writes and requests so far. */
  activity: number;
  requests: number;
  failure: Error | null;
}

/**
 * An instance's WebhookSender: a request is checked as it leaves (send-checks.ts), gets its receiver's answer (none
 * when the instance's own network is down) once the answer's duration has passed, and reaches the engine when its
 * process runs.
 */
export class SimulatedSender {
  constructor(
    private readonly world: SenderWorld,
    private readonly instance: Instance,
  ) {}

  send(request: WebhookRequest): Promise<AttemptResult> {
    const world = this.world;
    const instance = this.instance;
    world.activity++;
    world.requests++;
    const eventId = request.headers['x-service-event-id'];
    const attempt = Number(request.headers['x-service-attempt']);
    // The latest claim of that event and attempt number (two only when the event has two PENDING deliveries).
    const claim = instance.claims.get(`${eventId}#${attempt}`)?.pop();
    if (!claim) {
      world.failure ??= new Error(`simulation: ${instance.name} sent ${eventId} attempt ${attempt} without a claim it knows`);
      return Promise.reject(world.failure);
    }
    // A pause between the engine's last look at the lease and the request: the request leaves when the process runs again.
    if (world.random.chance(world.faults.pauseAtSend)) pause(world, instance);
    // The partition's lease as the engine last looked at it: a take answered while the process was paused (its answer runs
    // first when the process wakes) does not cover a request checked before the pause.
    const partitionLeaseAtCheck = instance.partitionLeases.get(partitionOf(claim.userId)) ?? Number.NEGATIVE_INFINITY;
    const calledAt = world.time.now;
    return new Promise<AttemptResult>((resolve) =>
      instance.clock.whenAwake(() => this.request(claim, request, partitionLeaseAtCheck, world.time.now - calledAt, resolve)),
    );
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private request(
    claim: ClaimedDelivery,
    request: WebhookRequest,
    partitionLeaseAtCheck: number,
    /** How long after send() the request leaves (a pause in between), as the real sender measures it. */
    sentAfterMs: number,
    resolve: (result: AttemptResult) => void,
  ): void {
    const world = this.world;
    const instance = this.instance;
    const attempt = claim.attemptCount + 1;
    const host = new URL(request.url).host;
    const endpoint = endpointKeyOf(claim.userId, request.url);
    const record = world.sendChecks.started(instance, claim, attempt, endpoint, partitionLeaseAtCheck);
    world.sendChecks.inTurn(instance, claim, attempt);
    const egressDown = world.egress.isDown(instance, world.time.now);
    const mode = world.receivers.modes.get(host) ?? 'up';
    const reached = egressDown ? networkUnreachable(world.random.int(1, 30)) : world.receivers.answer(mode);
    const written = reached.outcome !== 'connect_error' && reached.outcome !== 'tls_error';
    const result = written ? { ...reached, sentAfterMs } : reached;
    world.trace(
      `  ${instance.name} sends ${claim.eventId} (delivery ${claim.id}) attempt ${attempt} to ${host} [${egressDown ? 'its network down' : mode}]`,
    );
    const sentAt = world.time.now;
    world.time.schedule(sentAt + result.durationMs, () => {
      world.activity++;
      world.sendChecks.ended(record);
      const answer = world.receivers.noteAnswer(endpoint, instance, sentAt, world.time.now, isUnreachable(result.outcome));
      if (!isUnreachable(result.outcome)) world.circuits.answered(endpoint);
      world.egress.noteRequest(instance, world.time.now, endpoint, !isUnreachable(result.outcome));
      world.trace(
        `  ${claim.eventId} attempt ${attempt} by ${instance.name}: ${result.outcome}${result.statusCode ? ` ${result.statusCode}` : ''}`,
      );
      if (instance.alive)
        instance.clock.whenAwake(() => {
          answer.seenAt = world.time.now;
          const leaseUntil = instance.partitionLeases.get(partitionOf(claim.userId)) ?? Number.NEGATIVE_INFINITY;
          answer.owned = leaseUntil - instance.clock.skewMs > world.time.now;
          resolve(result);
        });
    });
  }
}
