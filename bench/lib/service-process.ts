// One service instance under test, driven over IPC: the real standalone AppModule with its real HTTP
// set-up, configured from the environment like `node dist/service/main.js`, plus the library's public
// WebhookPublisher and the internal DeliveryScheduler for publishing and ticks, memory sampling and CPU profiling.
import { writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { DIST, library } from './library';
import { wallMs } from './clock';
import { serveIpc } from './ipc';
import type { MemorySample, PauseReport } from './service-types';

type AppModuleFile = typeof import('../../src/service/app.module');
type ConfigureFile = typeof import('../../src/service/configure-app');
type ConfigFile = typeof import('../../src/service/config/load-app-config');
type SchedulerFile = typeof import('../../src/notifications/scheduler/delivery-scheduler.service');
type NestCore = typeof import('@nestjs/core');

async function boot() {
  const { NestFactory } = require('@nestjs/core') as NestCore;
  const { AppModule } = require(`${DIST}/service/app.module.js`) as AppModuleFile;
  const { configureApp } = require(`${DIST}/service/configure-app.js`) as ConfigureFile;
  const { loadAppConfig } = require(`${DIST}/service/config/load-app-config.js`) as ConfigFile;
  const config = loadAppConfig(process.env);
  const app = await NestFactory.create(AppModule.forConfig(config), { bodyParser: false, logger: ['error', 'warn'] });
  configureApp(app as never);
  app.enableShutdownHooks(); // SIGTERM closes the app, as it did when configureApp enabled the hooks (main.ts has its own handler now)
  await app.listen(config.port, '127.0.0.1');
  return app;
}

/** Statements the service sent to the database, by kind and table (counted in mysql2, below TypeORM). */
const queryCounts = new Map<string, number>();
function countQueries(): void {
  try {
    // mysql2's exports map hides lib/: its BaseConnection is the prototype of the exported Connection's.
    const { Connection } = require('mysql2') as { Connection: { prototype: object } };
    const base = Object.getPrototypeOf(Connection.prototype) as Record<string, (...args: unknown[]) => unknown>;
    for (const method of ['query', 'execute']) {
      const original = base[method];
      base[method] = function (this: unknown, sql: unknown, ...rest: unknown[]) {
        const text = typeof sql === 'string' ? sql : ((sql as { sql?: string } | null)?.sql ?? '');
        const verb = /^\s*(\w+(?:\s+TRANSACTION)?)/i.exec(text)?.[1]?.toUpperCase() ?? '?';
        const table = /\b(?:FROM|INTO|UPDATE)\s+`?(\w+)`?/i.exec(text)?.[1] ?? '';
        const key = table ? `${verb} ${table}` : verb;
        queryCounts.set(key, (queryCounts.get(key) ?? 0) + 1);
        return original.call(this, sql, ...rest);
      };
    }
  } catch {
    // not on mysql2
  }
}

async function main(): Promise<void> {
  countQueries();
  const { WebhookPublisher } = library();
  const { DeliveryScheduler } = require(`${DIST}/notifications/scheduler/delivery-scheduler.service.js`) as SchedulerFile;
  const app = await boot();
  const publisher = app.get(WebhookPublisher);
  const scheduler = app.get(DeliveryScheduler);
  const session = new Session();
  session.connect();
  let samples: MemorySample[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let gcPauses: number[] = [];
  const gcObserver = new PerformanceObserver((list) => gcPauses.push(...list.getEntries().map((entry) => entry.duration)));
  let sampler: NodeJS.Timeout | undefined;

  serveIpc({
    /** Publishes one batch; `payload.t` is stamped with the publish time, for latency. */
    publish: async (events: { payload: Record<string, unknown> }[]) => {
      const t = wallMs();
      for (const event of events) event.payload.t = t;
      const result = await publisher.publishMany(events as never);
      return { queued: result.queuedDeliveries, eventIds: result.eventIds.length, committedMs: wallMs() - t };
    },
    tick: () => scheduler.tick(),
    /** This process's CPU time so far (µs), and its statement counts (reset by the call when asked). */
    cpuUsage: () => process.cpuUsage(),
    queryCounts: (reset: boolean) => {
      const counts = Object.fromEntries([...queryCounts].sort((a, b) => b[1] - a[1]));
      if (reset) queryCounts.clear();
      return counts;
    },
    startSampling: (intervalMs: number) => {
      samples = [];
      const sample = () => {
        const { rss, heapUsed } = process.memoryUsage();
        samples.push({ at: wallMs(), rss, heapUsed });
      };
      sample();
      sampler = setInterval(sample, intervalMs);
    },
    stopSampling: () => {
      clearInterval(sampler);
      return samples;
    },
    /** Event-loop delay and GC pauses of the service, to tell queueing from pauses in latency tails. */
    startPauseWatch: () => {
      loopDelay.reset();
      loopDelay.enable();
      gcPauses = [];
      gcObserver.observe({ entryTypes: ['gc'] });
    },
    stopPauseWatch: (): PauseReport => {
      loopDelay.disable();
      gcObserver.disconnect();
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      return {
        loopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
        gc: {
          count: gcPauses.length,
          totalMs: Math.round(gcPauses.reduce((sum, d) => sum + d, 0)),
          maxMs: Math.round(Math.max(0, ...gcPauses)),
        },
      };
    },
    startProfile: async () => {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 500 });
      await session.post('Profiler.start');
    },
    stopProfile: async (file: string) => {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      await session.post('Profiler.disable');
    },
    /** A full garbage collection, then the memory in use: what the process really holds (live heap), not garbage yet to collect. */
    collectGarbage: () => {
      setFlagsFromString('--expose-gc');
      (runInNewContext('gc') as () => void)();
      return process.memoryUsage();
    },
    close: async () => {
      await app.close();
      setImmediate(() => process.exit(0));
    },
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
