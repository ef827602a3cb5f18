// `npm run test:upgrade [-- --from=<commit>]`: a rolling upgrade rehearsed on MariaDB, old and new versions side by side.
// Builds <commit> (default: the last version with the shared slot tables) in a scratch git worktree, runs two delivering
// instances and one `api` instance of it with events published round-robin through them, each user's endpoint answering
// after 2 s (so requests pile up to the cap); then starts this checkout's build (its start migrates) and replaces the old
// instances one by one. Passes when no endpoint ever had more requests in flight than its cap, every acknowledged publish
// arrived exactly once, and no publish failed but with a 503 (retry later: the migration holds its locks a moment).
// Prints one JSON document, writes bench/results/upgrade-latest.json, exits 1 on any problem.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestCertificate } from '../../src/testing/test-certificate';
import { sleep } from '../lib/clock';
import { DEFAULT_MYSQL_URL, databaseServer } from '../lib/databases';
import { RESULTS_DIR, ROOT } from '../lib/paths';
import { type MainProcess, type ServiceEnvInput, startMainProcess } from '../lib/services';
import { benchEvent, enableWebhooks, postBatch } from '../lib/workload';

/** The last commit whose instances share the per-endpoint cap through `webhook_endpoint_slots`. */
const SLOT_TABLES_VERSION = 'e8773da';
const CAP = 4;
const ANSWER_MS = 2_000;
const USERS = 3;
/** Publishes per second (one event each), for {@link PUBLISH_MS}: more than the cap lets through, so a backlog waits. */
const RATE = 18;
const PUBLISH_MS = 35_000;
/** Between the steps of the roll: the first new instance, then each old one replaced. */
const STEP_MS = 10_000;
const LEASE_MS = 20_000;
const DRAIN_MS = 240_000;

const log = (message: string) => process.stderr.write(`[upgrade ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** `commit` built in a scratch worktree (sharing this checkout's node_modules); answers its service's entry point. */
function buildVersion(commit: string, dir: string): string {
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(join(ROOT, 'node_modules', '.bin', 'nest'), ['build', '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'ignore' });
  return ['dist/service/main.js', 'dist/main.js'].map((path) => join(dir, path)).find((path) => existsSync(path))!;
}

/** An HTTPS receiver that answers after {@link ANSWER_MS} and counts, per endpoint, requests in flight and each event's arrivals. */
async function slowReceiver(caFile: string) {
  const { keyPem, certPem } = await generateTestCertificate(['127.0.0.1']);
  writeFileSync(caFile, certPem);
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const arrivals = new Map<number, number>();
  const server = createServer({ key: keyPem, cert: certPem }, (req, res) => {
    const endpoint = req.url ?? '';
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const now = (inFlight.get(endpoint) ?? 0) + 1;
      inFlight.set(endpoint, now);
      peak.set(endpoint, Math.max(peak.get(endpoint) ?? 0, now));
      const seq = Number(/"seq":(\d+)/.exec(body)?.[1]);
      arrivals.set(seq, (arrivals.get(seq) ?? 0) + 1);
      setTimeout(() => {
        inFlight.set(endpoint, inFlight.get(endpoint)! - 1);
        res.end('ok');
      }, ANSWER_MS);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return { base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, peak, arrivals, close: () => server.close() };
}

async function main(): Promise<void> {
  const from = process.argv.find((arg) => arg.startsWith('--from='))?.slice('--from='.length) ?? SLOT_TABLES_VERSION;
  const scratch = mkdtempSync(join(tmpdir(), 'nw-upgrade-'));
  const oldDir = join(scratch, 'old');
  const server = await databaseServer(process.env.TEST_MYSQL_URL ?? DEFAULT_MYSQL_URL, true);
  const database = await server.create('upgrade');
  const receiver = await slowReceiver(join(scratch, 'ca.pem'));
  const running = new Map<string, MainProcess>();
  try {
    log(`building ${from}`);
    const oldMain = buildVersion(from, oldDir);
    const input: ServiceEnvInput = {
      database: database.env,
      caFile: join(scratch, 'ca.pem'),
      delivery: { leaseMs: LEASE_MS, perEndpointConcurrency: CAP },
    };
    const start = async (label: string, main: string | undefined, role: 'all' | 'api') => {
      running.set(label, await startMainProcess({ ...input, main, role }, scratch, label));
      log(`${label} up (${role})`);
    };
    const stop = async (label: string) => {
      const instance = running.get(label)!;
      running.delete(label); // no more publishes to it (a load balancer takes it out before it stops)
      await instance.stop();
      log(`${label} stopped`);
    };
    await start('old-1', oldMain, 'all');
    await start('old-2', oldMain, 'all');
    await start('old-api', oldMain, 'api');
    await enableWebhooks(running.get('old-1')!.base, USERS, [receiver.base]);

    const acknowledged = new Set<number>();
    const failures: string[] = [];
    const startedAt = Date.now();
    const publishing = (async () => {
      const calls: Promise<void>[] = [];
      for (let seq = 0; Date.now() - startedAt < PUBLISH_MS; seq++) {
        const bases = [...running.values()].map((instance) => instance.base);
        calls.push(
          postBatch(bases[seq % bases.length], [benchEvent(seq, USERS)]).then(
            () => void acknowledged.add(seq),
            (error: Error) => void failures.push(error.message.slice(0, 200)),
          ),
        );
        await sleep(1000 / RATE);
      }
      await Promise.all(calls);
    })();
    await sleep(STEP_MS);
    await start('new-1', undefined, 'all'); // migrates
    for (const [old, next] of [
      ['old-1', 'new-2'],
      ['old-2', 'new-3'],
    ]) {
      await sleep(STEP_MS);
      await stop(old);
      await start(next, undefined, 'all');
    }
    await sleep(STEP_MS);
    await stop('old-api');
    await publishing;
    const drainedBy = Date.now() + DRAIN_MS;
    while (Date.now() < drainedBy && [...acknowledged].some((seq) => !receiver.arrivals.has(seq))) await sleep(1000);

    const peakInFlight = Math.max(...receiver.peak.values());
    const missing = [...acknowledged].filter((seq) => !receiver.arrivals.has(seq)).length;
    const duplicates = [...receiver.arrivals.values()].filter((count) => count > 1).length;
    const refused = failures.filter((message) => !message.includes(': 503 '));
    const problems = [
      ...(peakInFlight > CAP ? [`an endpoint had ${peakInFlight} requests in flight (cap ${CAP})`] : []),
      ...(missing > 0 ? [`${missing} acknowledged events never arrived`] : []),
      ...(duplicates > 0 ? [`${duplicates} events arrived more than once`] : []),
      ...(refused.length > 0 ? [`${refused.length} publishes failed (not 503), first: ${refused[0]}`] : []),
    ];
    const result = {
      from,
      cap: CAP,
      answerMs: ANSWER_MS,
      peakInFlightByEndpoint: Object.fromEntries(receiver.peak),
      published: acknowledged.size + failures.length,
      acknowledged: acknowledged.size,
      answered503: failures.length - refused.length,
      failed: refused.length,
      missing,
      duplicates,
      passed: problems.length === 0,
      problems,
    };
    const json = JSON.stringify(result, null, 2);
    writeFileSync(join(RESULTS_DIR, 'upgrade-latest.json'), `${json}\n`);
    process.stdout.write(`${json}\n`);
    process.exitCode = result.passed ? 0 : 1;
  } finally {
    await Promise.all([...running.values()].map((instance) => instance.stop()));
    receiver.close();
    await database.drop();
    if (existsSync(oldDir)) execFileSync('git', ['worktree', 'remove', '--force', oldDir], { cwd: ROOT, stdio: 'ignore' });
    rmSync(scratch, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
