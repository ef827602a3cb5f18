import { type Logger } from '@nestjs/common';
import { Observable, type Observer, type Operator, Subscriber, type Subscription, type TeardownLogic } from 'rxjs';

/**
 * A stream whose subscribers cannot crash the process nor stop what emits: RxJS reports an error thrown by a
 * subscriber (or left unhandled in its pipe) by rethrowing it on a timer, which ends a Node process. Here each one is
 * logged once, and a throwing subscriber stays subscribed. Operators applied with `pipe` keep the guard.
 */
export class GuardedStream<T> extends Observable<T> {
  constructor(
    private readonly name: string,
    private readonly logger: Logger,
    subscribe?: (this: Observable<T>, subscriber: Subscriber<T>) => TeardownLogic,
  ) {
    super(subscribe);
  }

  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const lifted = new GuardedStream<R>(this.name, this.logger);
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }

  override subscribe(
    observerOrNext?: Partial<Observer<T>> | ((value: T) => void) | null,
    // RxJS 7's deprecated `subscribe(next, error, complete)` form.
    onError?: ((error: unknown) => void) | null,
    onComplete?: (() => void) | null,
  ): Subscription {
    // RxJS's own subscribers (operators, firstValueFrom) pass through: their teardown must stay linked.
    if (observerOrNext instanceof Subscriber) return super.subscribe(observerOrNext);
    const observer: Partial<Observer<T>> =
      typeof observerOrNext === 'function'
        ? { next: observerOrNext, error: onError ?? undefined, complete: onComplete ?? undefined }
        : (observerOrNext ?? {});
    return super.subscribe({
      next: (value) => this.guard(() => observer.next?.(value)),
      error: (error: unknown) => (observer.error ? this.guard(() => observer.error!(error)) : this.report(error)),
      complete: () => this.guard(() => observer.complete?.()),
    });
  }

  private guard(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.report(error);
    }
  }

  private report(error: unknown): void {
    const stack = error instanceof Error ? error.stack : undefined;
    this.logger.error(`A subscriber of ${this.name} threw; delivery goes on: ${String(error)}`, stack);
  }
}
