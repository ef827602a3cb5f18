import type { EntityManager } from 'typeorm';
import type { NewEvent } from '../../src/notifications/delivery/engine/outbox-store';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { WebhookTarget } from '../../src/notifications/preferences/preferences.service';
import { webhookKey } from '../../src/notifications/preferences/webhook-key';
import { SimTransaction } from './in-memory-outbox-store';
import { startInstance } from './instances';
import { crash, pause, shutdown } from './process-faults';
import { advanceTo, type RestWorld } from './rest';
import { formatMs, type HostTransaction, HOUR, type Instance, MINUTE, RETENTION_MS, SECOND, type SimEvent } from './world-model';

/** What the random steps need of the world. */
export interface StepWorld extends RestWorld {
  readonly users: readonly number[];
  /** Every event published, by id: what the world expects of each. */
  readonly events: Map<string, SimEvent>;
  readonly transactions: HostTransaction[];
  readonly faults: { readonly pause: number; readonly prefsFail: number; readonly pauseAtSend: number };
}

/**
 * The random steps of a run: publishes alone and inside host transactions, commits and rollbacks, time advancing,
 * redeliveries, recoveries, purges, scheduler ticks, crashes, shutdowns and restarts, pauses, database outages, webhooks
 * turned off, receivers changing, clock jumps; after each, maybe an instance's own network goes down.
 */
export class RandomSteps {
  private nextEvent = 1;
  private nextTx = 1;

  constructor(private readonly world: StepWorld) {}

  /** One random step, as weighted by what the world holds now (publishes need a live instance, commits a ready transaction, ...). */
  async take(): Promise<void> {
    const world = this.world;
    const r = world.random;
    const alive = world.instances.filter((instance) => instance.alive);
    const dead = world.roles.map((_, slot) => slot).filter((slot) => !world.instances.some((i) => i.slot === slot && i.alive));
    const ready = world.transactions.filter((t) => t.ready && t.tx.state === 'open');
    const step = r.weighted({
      publish: alive.length > 0 ? 12 : 0,
      burst: alive.length > 0 ? 1 : 0,
      publishWithin: alive.length > 0 ? 6 : 0,
      commit: ready.length > 0 ? 7 : 0,
      rollback: ready.length > 0 ? 2 : 0,
      advance: 35,
      redeliver: alive.length > 0 && world.store.deliveries.size > 0 ? 3 : 0,
      recover: alive.length > 0 ? 1.5 : 0,
      purge: alive.length > 0 ? 3 : 0,
      tick: alive.length > 0 ? 2 : 0,
      crash: alive.length > 0 ? 1.2 : 0,
      shutdown: alive.length > 0 ? 0.8 : 0,
      restart: dead.length > 0 ? 4 : 0,
      toggle: 1,
      endpoint: 3,
      skew: world.skews.maxMs > 0 ? 1 : 0,
      outage: world.database.rates.outage,
      pause: alive.length > 0 ? world.faults.pause : 0,
    });
    switch (step) {
      case 'publish':
        return this.publish(r.pick(alive));
      case 'burst':
        return this.publish(r.pick(alive), r.int(10, 40));
      case 'publishWithin':
        return this.publishWithin(r.pick(alive));
      case 'commit': {
        const t = r.pick(ready);
        t.tx.commit();
        world.activity++;
        for (const event of t.events) event.acked = true;
        world.trace(`commit ${t.tx.name} on ${t.instance.name}: ${t.events.map((e) => e.id).join(' ')} acknowledged`);
        world.observer.observeStore();
        return;
      }
      case 'rollback': {
        const t = r.pick(ready);
        t.tx.rollback();
        world.trace(`rollback ${t.tx.name} on ${t.instance.name}: ${t.events.map((e) => e.id).join(' ')}`);
        return;
      }
      case 'advance': {
        const span = r.weighted({ short: 40, seconds: 30, minute: 20, long: 10, hours: 3 });
        const ms = {
          short: r.int(0, SECOND),
          seconds: r.int(SECOND, 10 * SECOND),
          minute: r.int(10 * SECOND, 70 * SECOND),
          long: r.int(MINUTE, 30 * MINUTE),
          hours: r.int(30 * MINUTE, 3 * HOUR),
        }[span];
        world.trace(`advance ${formatMs(ms)}`);
        return advanceTo(world, world.time.now + ms);
      }
      case 'redeliver':
        return this.redeliver(r.pick(alive));
      case 'recover': {
        const instance = r.pick(alive);
        const userId = r.pick(world.users);
        const now = instance.clock.now();
        world.trace(`recover user ${userId} on ${instance.name}`);
        void instance.engine.recover({ userId, since: now - 24 * HOUR, until: now }).then(
          ({ queued }) => world.trace(`  recover user ${userId}: ${queued} queued`),
          (error: Error) => world.trace(`  recover user ${userId} failed: ${error.message}`),
        );
        return;
      }
      case 'purge': {
        const instance = r.pick(alive);
        const status = r.pick([DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.CANCELLED] as const);
        world.trace(`purge ${status} on ${instance.name}`);
        void instance.purge.purgeBatch(status, instance.clock.now() - RETENTION_MS[status], 20).then(
          (batch) => batch.deliveries > 0 && world.trace(`  purged ${batch.deliveries} ${status}, ${batch.events} events`),
          (error: Error) => world.trace(`  purge failed: ${error.message}`),
        );
        return;
      }
      case 'tick': {
        const instance = r.pick(alive);
        world.trace(`scheduler tick on ${instance.name}`);
        void instance.scheduler.tick().catch(() => undefined);
        return;
      }
      case 'crash':
        return crash(world, r.pick(alive));
      case 'shutdown':
        return shutdown(world, r.pick(alive));
      case 'restart': {
        const slot = r.pick(dead);
        startInstance(world, slot, world.roles[slot]);
        return;
      }
      case 'toggle': {
        const webhook = r.pick([...world.webhooks.all.values()]);
        webhook.enabled = !webhook.enabled;
        world.trace(`user ${webhook.userId} turns WEBHOOK ${webhook.enabled ? 'on' : 'off'} for ${webhook.type}`);
        return;
      }
      case 'endpoint': {
        const host = r.pick([...world.receivers.modes.keys()]);
        const mode = world.receivers.randomMode();
        world.receivers.modes.set(host, mode);
        world.trace(`endpoint ${host} is now ${mode}`);
        return;
      }
      case 'skew': {
        const instance = r.pick(alive.length > 0 ? alive : world.instances);
        instance.clock.skewMs = world.skews.draw();
        world.trace(`clock of ${instance.name} now ${instance.clock.skewMs} ms off`);
        return;
      }
      case 'outage': {
        const outage = world.database.startOutage();
        if (!outage) return;
        world.trace(`database outage (${outage.kind}) for ${formatMs(outage.until - outage.from)}`);
        return;
      }
      case 'pause':
        pause(world, r.pick(alive));
        return;
    }
  }

  /** After a step, maybe one delivering instance loses its own network for a while (its own stream of chances). */
  maybeLoseNetwork(): void {
    const world = this.world;
    const deliverers = world.instances.filter((instance) => instance.alive && instance.role !== 'api');
    const lost = world.egress.maybeStart(world.time.now, deliverers);
    if (lost)
      world.trace(`network of ${lost.instance.name} down for ${formatMs(lost.until - world.time.now)} (the database still answers it)`);
  }

  private newEvents(
    count = this.world.random.int(1, 3),
  ): { events: SimEvent[]; news: NewEvent[]; targets: Map<string, WebhookTarget> } | null {
    const world = this.world;
    const webhooks = [...world.webhooks.all.values()].filter((webhook) => webhook.enabled);
    if (webhooks.length === 0) return null;
    const chosen = Array.from({ length: count }, () => world.random.pick(webhooks));
    const targets = new Map<string, WebhookTarget>();
    const news = chosen.map((webhook) => {
      targets.set(webhookKey(webhook.userId, webhook.type), world.webhooks.targetOf(webhook));
      const id = `e${this.nextEvent++}`;
      const body = JSON.stringify({ id, type: webhook.type });
      return { id, userId: webhook.userId, type: webhook.type, body, streamId: webhook.streamId };
    });
    return { events: news.map((e) => this.addEvent(e, null)), news, targets };
  }

  private addEvent(e: NewEvent, tx: SimTransaction | null): SimEvent {
    const event: SimEvent = {
      id: e.id,
      userId: e.userId,
      type: e.type,
      tx,
      acked: false,
      deliveredAt: null,
      purged: false,
    };
    this.world.events.set(e.id, event);
    return event;
  }

  private publish(instance: Instance, count?: number): void {
    const world = this.world;
    const batch = this.newEvents(count);
    if (!batch) return;
    const ids = batch.events.map((e) => e.id).join(' ');
    world.trace(`publish ${ids} on ${instance.name}`);
    void instance.engine.enqueue(batch.news, batch.targets).then(
      () => {
        for (const event of batch.events) event.acked = true;
        world.trace(`  publish ${ids} acknowledged`);
      },
      (error: Error) => world.trace(`  publish ${ids} failed: ${error.message}`),
    );
  }

  private publishWithin(instance: Instance): void {
    const world = this.world;
    const batch = this.newEvents();
    if (!batch) return;
    const tx = new SimTransaction(`tx${this.nextTx++}`);
    const events = batch.news.map((e) => {
      world.events.delete(e.id);
      return this.addEvent(e, tx);
    });
    const host: HostTransaction = { tx, instance, events, ready: false };
    world.transactions.push(host);
    const ids = events.map((e) => e.id).join(' ');
    world.trace(`publish ${ids} inside ${tx.name} on ${instance.name}`);
    void instance.engine.enqueueWithin(tx as unknown as EntityManager, batch.news, batch.targets).then(
      () => {
        host.ready = true;
      },
      (error: Error) => {
        world.trace(`  publish inside ${tx.name} failed (${error.message}): the host rolls back`);
        if (tx.state === 'open') tx.rollback();
      },
    );
  }

  /** As DeliveriesService.redeliver: a delivery still PENDING is refused (409), any other gets a new cycle of its event. */
  private redeliver(instance: Instance): void {
    const world = this.world;
    const row = world.random.pick([...world.store.deliveries.values()]);
    if (row.status === DeliveryStatus.PENDING) {
      world.trace(`redeliver delivery ${row.id} (${row.eventId}): refused, still PENDING`);
      return;
    }
    world.trace(`redeliver delivery ${row.id} (${row.eventId}, ${row.status}) on ${instance.name}`);
    void instance.engine.redeliver({ id: row.eventId, userId: row.userId, type: row.type }).then(
      (again) =>
        world.trace(
          `  redelivery of ${row.eventId}: ${again === null ? 'event gone' : 'running' in again ? `delivery ${again.running} running` : `delivery ${again.started}`}`,
        ),
      (error: Error) => world.trace(`  redelivery of ${row.eventId} failed: ${error.message}`),
    );
  }
}
