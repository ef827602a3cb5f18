// What waking costs on this machine, apart from any service: a loop at the latency scenario's two rates that sleeps
// until each event's time (the scenario's publisher does not sleep when 1 ms or less is left, so at 2,000/s it wakes a
// little less often) and runs `roundTrips` bare mysql2 `SELECT 1` in turn (none: it only wakes), in its own process.
// Its CPU per event at 200/s against 2,000/s is the floor under a lone event's CPU ratio (issue 24): a process that
// sleeps between events pays on each wake-up what a busy one shares.
import { createPool } from 'mysql2/promise';
import { sleep, wallMs } from './clock';
import { serveIpc } from './ipc';

export interface WakeFloorInput {
  readonly rate: number;
  readonly seconds: number;
  readonly roundTrips: number;
  /** MySQL/MariaDB server URL; required when `roundTrips` > 0. */
  readonly url?: string;
}

async function run(input: WakeFloorInput): Promise<{ cpuMsPerEvent: number }> {
  const pool = input.roundTrips > 0 ? createPool({ uri: input.url, connectionLimit: 4 }) : undefined;
  try {
    const work = async () => {
      for (let i = 0; i < input.roundTrips; i++) await pool!.query('SELECT 1');
    };
    for (let i = 0; i < 100; i++) await work(); // warm: JIT, connections
    const total = input.rate * input.seconds;
    const before = process.cpuUsage();
    const startedAt = wallMs();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const wait = startedAt + (i * 1000) / input.rate - wallMs();
      if (wait > 0) await sleep(wait);
      pending.push(work());
    }
    await Promise.all(pending);
    const used = process.cpuUsage(before);
    return { cpuMsPerEvent: Math.round(((used.user + used.system) / 1000 / total) * 1000) / 1000 };
  } finally {
    await pool?.end();
  }
}

serveIpc({ run });
