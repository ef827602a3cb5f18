import { Logger } from '@nestjs/common';
import { Subject, config, filter, firstValueFrom, map } from 'rxjs';
import { GuardedStream } from './subscriber-guard';

function streamOf(subject: Subject<number>) {
  const logged: string[] = [];
  const logger = { error: (message: string) => logged.push(message) } as unknown as Logger;
  return { stream: new GuardedStream<number>('Facts.numbers', logger, (subscriber) => subject.subscribe(subscriber)), logged };
}

describe('GuardedStream', () => {
  const unhandled: unknown[] = [];
  beforeEach(() => {
    unhandled.length = 0;
    config.onUnhandledError = (error) => unhandled.push(error);
  });
  afterEach(() => {
    config.onUnhandledError = null;
  });
  // RxJS reports unhandled subscriber errors on a timer: one timer turn lets any of them surface.
  const afterRxjsReports = () => new Promise((resolve) => setTimeout(resolve, 5));

  it('logs a throwing subscriber once per throw, keeps it subscribed, and lets the others and the emitter go on', async () => {
    const subject = new Subject<number>();
    const { stream, logged } = streamOf(subject);
    const seenByThrower: number[] = [];
    const seenByOther: number[] = [];
    stream.subscribe((n) => {
      seenByThrower.push(n);
      throw new Error(`bug at ${n}`);
    });
    stream.subscribe((n) => seenByOther.push(n));

    expect(() => [1, 2].forEach((n) => subject.next(n))).not.toThrow();
    await afterRxjsReports();

    expect(seenByThrower).toEqual([1, 2]);
    expect(seenByOther).toEqual([1, 2]);
    expect(logged).toEqual(['A subscriber of Facts.numbers threw; delivery goes on: Error: bug at 1', expect.stringContaining('bug at 2')]);
    expect(unhandled).toEqual([]);
  });

  it('keeps the guard through pipe: a throwing handler after operators, and an error left unhandled in the pipe', async () => {
    const subject = new Subject<number>();
    const { stream, logged } = streamOf(subject);
    stream.pipe(filter((n) => n > 1)).subscribe(() => {
      throw new Error('after filter');
    });
    stream
      .pipe(
        map((n) => {
          if (n === 1) throw new Error('in map');
          return n;
        }),
      )
      .subscribe(() => undefined);

    subject.next(1);
    subject.next(2);
    await afterRxjsReports();

    expect(logged).toEqual([expect.stringContaining('Error: in map'), expect.stringContaining('Error: after filter')]);
    expect(unhandled).toEqual([]);
  });

  it("hands a stream's error to the subscriber's own error handler, in both forms", () => {
    const subject = new Subject<number>();
    const { stream, logged } = streamOf(subject);
    const handled: unknown[] = [];
    stream.subscribe({ error: (error) => handled.push(error) });
    stream.subscribe(
      () => undefined,
      (error) => handled.push(error),
    );
    subject.error('gone');

    expect(handled).toEqual(['gone', 'gone']);
    expect(logged).toEqual([]);
  });

  it("leaves RxJS's own subscribers and unsubscribing as they are", async () => {
    const subject = new Subject<number>();
    const { stream } = streamOf(subject);
    const first = firstValueFrom(stream.pipe(map((n) => n * 10)));
    const seen: number[] = [];
    const subscription = stream.subscribe((n) => seen.push(n));
    subject.next(1);
    subscription.unsubscribe();
    subject.next(2);

    expect(await first).toBe(10);
    expect(seen).toEqual([1]);
    expect(subject.observed).toBe(false);
  });
});
