import { EventType } from '../catalog/event-catalog';
import { foldFinished } from './finished-runs';

const { RATE_SPIKE, LOAN_EXECUTED } = EventType;

describe('foldFinished', () => {
  it('counts only the failures after the last delivered one, per user and type, in first-seen order', () => {
    const runs = foldFinished([
      { userId: 1, type: RATE_SPIKE, delivered: false },
      { userId: 2, type: RATE_SPIKE, delivered: false },
      { userId: 1, type: RATE_SPIKE, delivered: false },
      { userId: 1, type: LOAN_EXECUTED, delivered: true },
      { userId: 1, type: RATE_SPIKE, delivered: true },
      { userId: 1, type: RATE_SPIKE, delivered: false },
      { userId: 2, type: RATE_SPIKE, delivered: false },
    ]);

    expect(runs).toEqual([
      { userId: 1, type: RATE_SPIKE, reset: true, failuresAfter: 1 },
      { userId: 2, type: RATE_SPIKE, reset: false, failuresAfter: 2 },
      { userId: 1, type: LOAN_EXECUTED, reset: true, failuresAfter: 0 },
    ]);
  });

  it("keeps a webhook's runs apart by the URL their last attempts went to", () => {
    const runs = foldFinished([
      { userId: 1, type: RATE_SPIKE, delivered: false, webhookUrl: 'https://old.example/hook' },
      { userId: 1, type: RATE_SPIKE, delivered: false, webhookUrl: 'https://new.example/hook' },
      { userId: 1, type: RATE_SPIKE, delivered: false, webhookUrl: 'https://old.example/hook' },
    ]);

    expect(runs).toEqual([
      { userId: 1, type: RATE_SPIKE, webhookUrl: 'https://old.example/hook', reset: false, failuresAfter: 2 },
      { userId: 1, type: RATE_SPIKE, webhookUrl: 'https://new.example/hook', reset: false, failuresAfter: 1 },
    ]);
  });
});
