// A peer's process: the scenario prepares it (connects, makes its queue or tables, starts its workers), times `run`
// (publish every job in batches, one call after the other, as the engine's publishMany run does) and waits at the
// receiver; `finish` then waits until the store says every job is done, and closes.
import { sleep, wallMs } from '../clock';
import { serveIpc } from '../ipc';
import type { PeerInput, PeerJob, PeerOutcome } from './peer-types';
import { peerJobs, WebhookPoster } from './webhook-post';

/** What each peer implements over its own store. */
export interface Peer {
  publish(jobs: readonly PeerJob[]): Promise<void>;
  /** Jobs marked done (and failed) so far, as the store says. */
  outcome(): Promise<PeerOutcome>;
  close(): Promise<void>;
}

/** How long `finish` waits for the store to mark the last jobs done once the receiver has them all. */
const FINISH_TIMEOUT_MS = 30_000;

export function servePeer(start: (input: PeerInput, poster: WebhookPoster) => Promise<Peer>): void {
  let input: PeerInput;
  let poster: WebhookPoster;
  let peer: Peer;
  serveIpc({
    prepare: async (given: PeerInput) => {
      input = given;
      poster = new WebhookPoster(input);
      peer = await start(input, poster);
    },
    /** Publishes every job; resolves with their number. */
    run: async () => {
      const jobs = peerJobs(0, input.events, input.users);
      for (let i = 0; i < jobs.length; i += input.batchSize) await peer.publish(jobs.slice(i, i + input.batchSize));
      return jobs.length;
    },
    finish: async (): Promise<PeerOutcome> => {
      const deadline = wallMs() + FINISH_TIMEOUT_MS;
      let outcome = await peer.outcome();
      while (outcome.done + outcome.failed < input.events && wallMs() < deadline) {
        await sleep(100);
        outcome = await peer.outcome();
      }
      await peer.close();
      await poster.close();
      return outcome;
    },
  });
}
