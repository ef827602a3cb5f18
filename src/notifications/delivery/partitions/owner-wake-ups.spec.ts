import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger, type LoggerService } from '@nestjs/common';
import { InMemoryPartitionLeases } from '../../../../test/simulation/in-memory-partition-leases';
import type { ClockTimer } from '../../clock/clock';
import { TestClock } from '../../../testing/test-clock';
import { OwnerWakeUps } from './owner-wake-ups';
import { PARTITION_RENEW_MS } from './partition-ownership';

const TOKEN = 'the-internal-token-of-the-instances-0123';

/** The partitions table as the wake-ups read it: who can be woken where, and how often it was read. */
class Directory extends InMemoryPartitionLeases {
  reads = 0;
  constructor(private readonly urls: ReadonlyMap<number, string>) {
    super();
  }
  override wakeUrls(): Promise<ReadonlyMap<number, string>> {
    this.reads++;
    return Promise.resolve(this.urls);
  }
}

/** A clock that stands still and whose timers fire only when the test says. */
class TimersByHand extends TestClock {
  private readonly due: (() => void)[] = [];
  override setTimeout(run: () => void): ClockTimer {
    this.due.push(run);
    return { cancel: () => undefined };
  }
  async armed(count: number): Promise<void> {
    for (let turn = 0; this.due.length < count; turn++) {
      if (turn === 1_000) throw new Error(`${this.due.length} timer(s) armed, expected ${count}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  fireAll(): void {
    for (const run of this.due.splice(0)) run();
  }
}

/** An instance's wake route on loopback, answering each wake-up only when the test lets it. */
async function wakeRoute() {
  const held: ServerResponse[] = [];
  const received: IncomingMessage[] = [];
  const server: Server = createServer((request, response) => {
    received.push(request);
    request.resume();
    held.push(response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const arrived = async (count: number) => {
    while (received.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/internal/notifications/wake`,
    received,
    arrived,
    answerAll: () => held.splice(0).forEach((response) => response.writeHead(204).end()),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('OwnerWakeUps', () => {
  it('sends one wake-up at a time to an owner, and one more for all that were asked for meanwhile', async () => {
    const route = await wakeRoute();
    const wakeUps = new OwnerWakeUps(new Directory(new Map([[7, route.url]])), new TestClock(), TOKEN, null);
    try {
      const first = wakeUps.notify(new Set([7]));
      await route.arrived(1);
      const meanwhile = Array.from({ length: 50 }, () => wakeUps.notify(new Set([7])));
      route.answerAll();
      await first;
      await route.arrived(2);
      route.answerAll();
      await Promise.all(meanwhile); // each resolves once the wake-up after the first has ended
      expect(route.received).toHaveLength(2);
      expect(route.received.map((request) => [request.method, request.headers.authorization])).toEqual([
        ['POST', `Bearer ${TOKEN}`],
        ['POST', `Bearer ${TOKEN}`],
      ]);
    } finally {
      await wakeUps.close();
      await route.close();
    }
  });

  it('sends a wake-up asked for within 25 ms of the last one when they have passed, for every one asked for meanwhile', async () => {
    const route = await wakeRoute();
    const clock = new TimersByHand();
    const wakeUps = new OwnerWakeUps(new Directory(new Map([[7, route.url]])), clock, TOKEN, null);
    try {
      const first = wakeUps.notify(new Set([7]));
      await route.arrived(1);
      route.answerAll();
      await first;
      const next = wakeUps.notify(new Set([7])); // within the spacing (the clock stands still): it waits for it
      await clock.armed(1);
      const meanwhile = Array.from({ length: 49 }, () => wakeUps.notify(new Set([7])));
      clock.fireAll();
      await route.arrived(2);
      route.answerAll();
      await Promise.all([next, ...meanwhile]);
      expect(route.received).toHaveLength(2);
    } finally {
      await wakeUps.close();
      await route.close();
    }
  });

  it('wakes only other owners, and nobody without the internal token', async () => {
    const own = await wakeRoute();
    const other = await wakeRoute();
    const directory = new Directory(
      new Map([
        [1, own.url],
        [2, other.url],
      ]),
    );
    const withoutToken = new OwnerWakeUps(directory, new TestClock(), null, own.url);
    const wakeUps = new OwnerWakeUps(directory, new TestClock(), TOKEN, own.url);
    try {
      await withoutToken.notify(new Set([1, 2]));
      const woken = wakeUps.notify(new Set([1, 2, 3])); // 3: its owner has no wake URL (or no owner)
      await other.arrived(1);
      other.answerAll();
      await woken;
      expect([own.received.length, other.received.length]).toEqual([0, 1]);
    } finally {
      await Promise.all([withoutToken.close(), wakeUps.close()]);
      await Promise.all([own.close(), other.close()]);
    }
  });

  it('reads who owns what at most once per renewal interval', async () => {
    const route = await wakeRoute();
    const directory = new Directory(new Map([[1, route.url]]));
    const clock = new TestClock();
    const wakeUps = new OwnerWakeUps(directory, clock, TOKEN, null);
    try {
      for (let i = 0; i < 20; i++) void wakeUps.notify(new Set([1]));
      await route.arrived(1);
      clock.advance(PARTITION_RENEW_MS - 1);
      void wakeUps.notify(new Set([1]));
      expect(directory.reads).toBe(1);
      clock.advance(1);
      void wakeUps.notify(new Set([1]));
      expect(directory.reads).toBe(2);
    } finally {
      route.answerAll();
      await wakeUps.close();
      await route.close();
    }
  });

  it('logs failed wake-ups at most once a minute, with how many failed since', async () => {
    const warnings: string[] = [];
    const capture: LoggerService = { log: () => undefined, error: () => undefined, warn: (message: string) => warnings.push(message) };
    Logger.overrideLogger(capture);
    const closed = await wakeRoute();
    await closed.close(); // nothing listens there any more: every wake-up is refused
    const clock = new TestClock();
    const wakeUps = new OwnerWakeUps(new Directory(new Map([[1, closed.url]])), clock, TOKEN, null);
    const failedWakeUps = async (count: number) => {
      for (let i = 0; i < count; i++) await wakeUps.notify(new Set([1]));
    };
    try {
      await failedWakeUps(1);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /^Wake-ups: 127\.0\.0\.1:\d+ was not woken \(.+\); the owners take what was published at their next look/,
      );
      await failedWakeUps(3);
      expect(warnings).toHaveLength(1);
      clock.advance(60_000);
      await failedWakeUps(1);
      expect(warnings).toHaveLength(2);
      expect(warnings[1]).toContain('(4 wake-ups failed since the last such line)');
    } finally {
      Logger.overrideLogger(false);
      await wakeUps.close();
    }
  });
});
