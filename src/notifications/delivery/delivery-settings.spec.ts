import { randomBytes } from 'node:crypto';
import { SERVICE_VERSION } from '../../version';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { deliverySettings } from './delivery-settings';

/** Module options with nothing about delivery but what is given. */
const options = (delivery?: NotificationsModuleOptions['delivery']): NotificationsModuleOptions => ({
  encryptionKeys: [{ id: 'k1', key: randomBytes(32) }],
  delivery,
});

describe('deliverySettings', () => {
  it('defaults to what docs/configuration.md documents: 64 in flight, 4 per endpoint, 5 failures and 30 s, 200 a batch, 60 s leases, 5 s deadlines', () => {
    expect(deliverySettings(options())).toEqual({
      concurrency: 64,
      perEndpointConcurrency: 4,
      circuitBreaker: { failuresToOpen: 5, coolDownMs: 30_000 },
      batchSize: 200,
      leaseMs: 60_000,
      timeoutMs: 5_000,
      shutdownGraceMs: 10_000,
      userAgent: `Service/${SERVICE_VERSION} (+https://funding.example.com)`,
      role: 'all',
      claimMode: undefined,
      wakeUrl: null,
    });
  });

  it("names the service's public site (SERVICE_SITE) in the User-Agent of every request", () => {
    expect(deliverySettings({ ...options(), serviceSite: 'https://lend.example.org' }).userAgent).toBe(
      `Service/${SERVICE_VERSION} (+https://lend.example.org)`,
    );
  });

  it('refuses a lease that leaves no room for the deadline, the record and the clock skew, naming both options', () => {
    expect(() => deliverySettings(options({ leaseMs: 12_000, timeoutMs: 5_000 }))).toThrow(
      'delivery.leaseMs (12000) must exceed delivery.timeoutMs (5000) by more than 7000 ms (record budget and tolerated clock skew)',
    );
    expect(deliverySettings(options({ leaseMs: 12_001, timeoutMs: 5_000 })).leaseMs).toBe(12_001);
  });

  it('takes a wake URL only as an absolute http(s) URL, and only with the internal token its route is called with', () => {
    const token = { internalApiToken: 'the-internal-token-of-the-instances-0123' };
    const wakeUrl = 'http://10.0.0.5:3000/api/v1/internal/notifications/wake';
    expect(deliverySettings({ ...options({ wakeUrl }), ...token }).wakeUrl).toBe(wakeUrl);
    expect(() => deliverySettings(options({ wakeUrl }))).toThrow(
      'delivery.wakeUrl (DELIVERY_WAKE_URL) needs internalApiToken (INTERNAL_API_TOKEN): the other instances call the wake route with it',
    );
    for (const wrong of ['10.0.0.5:3000/wake', '/api/v1/internal/notifications/wake', 'ftp://10.0.0.5/wake'])
      expect(() => deliverySettings({ ...options({ wakeUrl: wrong }), ...token })).toThrow(
        `delivery.wakeUrl must be an absolute http(s) URL, got ${JSON.stringify(wrong)}`,
      );
  });
});
