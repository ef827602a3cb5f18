import type { EntityManager } from 'typeorm';
import { GroupCommit } from '../../common/concurrency/group-commit';
import { takeEndpointSlot, takeFirstSlots } from './endpoint-slot-statements';
import type { SlotTaken } from './outbox-store';

/** Endpoints remembered as having their slot rows; forgotten all at once beyond this (a first take then costs one statement more). */
const KNOWN_ENDPOINTS_MAX = 100_000;
/** The most takes one group commits: its upsert writes up to `cap` rows for each. */
const MAX_GROUP = 256;
/**
 * Fewer first takes than this go one by one: the group's two statements run one after the other, so each of its takes
 * waits two round trips instead of one; only a larger group saves enough statements (and CPU) to be worth it.
 */
const MIN_GROUPED = 4;

/** A take of one of an endpoint's slots, as the engine asks for it ({@link OutboxStore.takeSlot}). */
export interface SlotRequest {
  readonly endpoint: string;
  readonly cap: number;
  readonly now: number;
  readonly until: number;
  readonly probing: boolean;
}

type Write = <T>(statement: (manager: EntityManager) => Promise<T>) => Promise<T>;

/**
 * The slot takes of a store. On MySQL/MariaDB, takes that come together (a burst of attempts, each to its own endpoint)
 * are group-committed: the first take of each endpoint that is not a probe goes into one upsert for slot 0 and one read
 * ({@link takeFirstSlots}), instead of a statement each; whatever that leaves (slot 0 held, a probe, a second take of an
 * endpoint, a lone take) is taken one by one ({@link takeEndpointSlot}). On SQLite every take goes alone: its writes are
 * serialized anyway.
 */
export class EndpointSlotTakes {
  /** Endpoints whose slot rows this instance has seen (their first take makes them): at most {@link KNOWN_ENDPOINTS_MAX}. */
  private readonly rowsSeen = new Set<string>();
  private readonly grouped: GroupCommit<SlotRequest, SlotTaken> | null;

  constructor(
    private readonly write: Write,
    private readonly mysql: boolean,
  ) {
    this.grouped = mysql ? new GroupCommit((takes) => this.takeTogether(takes), { maxGroupSize: MAX_GROUP, concurrency: 2 }) : null;
  }

  take(request: SlotRequest): Promise<SlotTaken> {
    return this.grouped ? this.grouped.submit(request) : this.takeAlone(request);
  }

  private async takeTogether(requests: readonly SlotRequest[]): Promise<SlotTaken[]> {
    const firsts = new Map<string, SlotRequest>();
    for (const request of requests) if (!request.probing && !firsts.has(request.endpoint)) firsts.set(request.endpoint, request);
    if (firsts.size < MIN_GROUPED) return Promise.all(requests.map((request) => this.takeAlone(request)));
    const grouped = [...firsts.values()];
    const takes = grouped.map(({ endpoint, cap, until }) => ({ endpoint, cap, until, rowsMade: this.rowsSeen.has(endpoint) }));
    // A slot is taken only where it was free for the earliest clock of the group.
    const now = Math.min(...grouped.map((request) => request.now));
    const answers = await this.write((manager) => takeFirstSlots(manager, takes, now));
    for (const endpoint of firsts.keys()) this.seen(endpoint);
    return Promise.all(
      requests.map((request) => (firsts.get(request.endpoint) === request && answers.get(request.endpoint)) || this.takeAlone(request)),
    );
  }

  private async takeAlone(request: SlotRequest): Promise<SlotTaken> {
    const taken = await takeEndpointSlot(this.write, this.mysql, { ...request, rowsMade: this.rowsSeen.has(request.endpoint) });
    this.seen(request.endpoint);
    return taken;
  }

  private seen(endpoint: string): void {
    if (this.rowsSeen.size >= KNOWN_ENDPOINTS_MAX) this.rowsSeen.clear();
    this.rowsSeen.add(endpoint);
  }
}
