import { EVENT_CATALOG, EventType, NotificationChannel, WEBHOOK_EVENT_TYPES, allowsChannel, eventTypeDefinition } from './event-catalog';

describe('event catalogue', () => {
  it('offers the webhook for exactly the 25 event types of spec 6.2', () => {
    expect(WEBHOOK_EVENT_TYPES).toHaveLength(25);
    expect(EVENT_CATALOG).toHaveLength(29);
  });

  it.each([EventType.HIGH_UTILIZATION, EventType.OFFER_FILLED, EventType.EARNINGS_MILESTONE, EventType.WITHDRAWAL_DETECTED])(
    'never offers the webhook for service-managed %s',
    (type) => {
      expect(allowsChannel(type, NotificationChannel.WEBHOOK)).toBe(false);
      expect(allowsChannel(type, NotificationChannel.IN_APP)).toBe(true);
    },
  );

  it.each([EventType.DAILY_DIGEST, EventType.WEEKLY_DIGEST, EventType.MONTHLY_DIGEST, EventType.YEARLY_DIGEST])(
    'sends %s by e-mail by default and nowhere else',
    (type) => {
      expect(eventTypeDefinition(type).defaultChannels).toEqual([NotificationChannel.EMAIL]);
    },
  );

  it('sends non-digest types in-app by default and never to a webhook by default', () => {
    for (const definition of EVENT_CATALOG) {
      expect(definition.defaultChannels).not.toContain(NotificationChannel.WEBHOOK);
    }
    expect(eventTypeDefinition(EventType.RATE_SPIKE).defaultChannels).toEqual([NotificationChannel.IN_APP]);
  });
});
