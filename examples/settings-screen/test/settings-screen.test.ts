// The reference screen in Debian's headless Chromium, against the built standalone service (SQLite) and a loopback
// HTTPS receiver: what a person sees and can do, and axe-core's accessibility rules. Screenshots: ./screenshots/.
import { createHmac, createPublicKey, verify } from 'node:crypto';
import type { TestReceiver } from '@funding/notification-webhooks/testing';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessibilityViolations, launchChromium, screenshot } from './support/browser';
import { writeDisabledWebhook } from './support/database';
import { devToken } from './support/dev-token';
import { testingKit } from './support/repo';
import { type ScreenServer, serveBuiltScreen } from './support/screen-server';
import { type RunningService, startService } from './support/service-process';

const USER_ID = 42;
const TEST_SENDS_PER_MINUTE = 2;
/** Polls that press "Refresh log": a person's pace, within the settings API's 120 requests a minute. */
const REFRESHING = { timeout: 15_000, interval: 500 };
/** The date and time as the screen shows them (`en-GB`, medium): `24 Nov 2026, 08:00:00`. */
const SHOWN_TIME = String.raw`\d{1,2} \w{3,4} \d{4}, \d{2}:\d{2}:\d{2}`;

let receiver: TestReceiver;
let service: RunningService;
let screen: ScreenServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What the browser refused under the page's Content-Security-Policy, all session long. */
const cspViolations: string[] = [];

beforeAll(async () => {
  receiver = await testingKit().startTestReceiver();
  service = await startService({
    receiverCaPem: receiver.caPem,
    // FAILING after one failed attempt, so that one publish to a failing receiver shows it.
    env: { RATE_LIMIT_TEST_SEND_PER_MINUTE: String(TEST_SENDS_PER_MINUTE), WEBHOOK_HEALTH_FAILING_AFTER: '1' },
  });
  screen = await serveBuiltScreen(service.url);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(screen.url).origin });
  page = await context.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
});

afterAll(async () => {
  await browser?.close();
  await screen?.close();
  await service?.stop();
  await receiver?.close();
});

const webhookSwitch = (label: string) => page.getByRole('switch', { name: `Webhook for ${label}` });
const urlField = (label: string) => page.getByRole('textbox', { name: `URL of the webhook for ${label}` });
const rowOf = (label: string) => page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: label }) });
const secretPanel = () => page.getByRole('region', { name: /Signing secret for/ });

async function isFocused(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => (element.getRootNode() as ShadowRoot | Document).activeElement === element);
}

async function expectNoAccessibilityViolations(): Promise<void> {
  expect(await accessibilityViolations(page)).toEqual([]);
}

/** The settings API as the signed-in user, from the test (to check what the screen did, not through it). */
async function settingsCall<T>(method: string, path: string, body?: object): Promise<{ status: number; data: T }> {
  const response = await fetch(`${service.url}/api/v1/settings/notifications${path}`, {
    method,
    headers: { authorization: `Bearer ${devToken(service.jwtSecret, USER_ID)}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, data: (await response.json()) as T };
}

interface HealthItem {
  type: string;
  state: string;
  failedAttemptsInRow: number;
  lastAttempt?: { statusCode: number | null };
  orderedDelivery: boolean;
  orderedHead?: { deliveryId: number; type: string; sequence: number | null; attemptCount: number };
  waitingBehind: number;
}
interface LoggedDelivery {
  id: number;
  eventId: string;
  type: string;
  status: string;
  sequence: number | null;
}
const deliveriesLogged = async () => (await settingsCall<{ data: LoggedDelivery[] }>('GET', '/webhook-deliveries?limit=20')).data.data;
const healthOf = async (type: string) =>
  (await settingsCall<HealthItem[]>('GET', '/webhook-health')).data.find((item) => item.type === type);

async function publish(type: string, title: string): Promise<void> {
  const published = await fetch(`${service.url}/api/v1/internal/notifications/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.internalToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ userId: USER_ID, type, severity: 'WARNING', title, body: 'from the settings screen test' }),
  });
  expect(published.status).toBe(202);
}

const healthBlock = (label: string) => rowOf(label).locator('.health');
const orderedSwitch = (label: string) => page.getByRole('switch', { name: `Ordered delivery for ${label}` });
const logRow = (id: number | RegExp) =>
  page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: typeof id === 'number' ? `#${id}` : id, exact: true }) });
/** The log's Sequence cell of a delivery (the first cell after its row header). */
const shownSequence = async (id: number) => (await logRow(id).getByRole('cell').first().textContent())?.trim();

describe('settings screen in headless Chromium', () => {
  let shownSecret = '';

  it('is served with a Content-Security-Policy: scripts of its own origin only, no inline script, no framing', async () => {
    const response = await page.goto(screen.url);
    const policy = response?.headers()['content-security-policy'] ?? '';
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    expect(await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')).toContain("script-src 'self'");
  });

  it('signs in with a developer token and shows the effective defaults: digests on email, no webhook toggle for service-managed types', async () => {
    await page.goto(screen.url);
    await page.getByLabel('Developer token').fill(devToken(service.jwtSecret, USER_ID));
    await page.getByRole('button', { name: 'Use token' }).click();

    const dailyDigest = rowOf('Daily digest');
    await expect.poll(() => dailyDigest.getByRole('cell').nth(1).textContent()).toMatch(/On\s+\(default\)/);
    expect(await dailyDigest.getByRole('cell').nth(0).textContent()).toMatch(/Off\s+\(default\)/); // in-app
    expect(await rowOf('Rate spike').getByRole('cell').nth(0).textContent()).toMatch(/On\s+\(default\)/);
    expect(await rowOf('High utilization').getByRole('cell').nth(2).innerText()).toBe('Not offered');
    expect(await rowOf('High utilization').getByRole('switch').count()).toBe(0);
    expect(await page.getByRole('switch').count()).toBe(25); // 29 types, 4 managed by the service
    expect(await webhookSwitch('Rate spike').isChecked()).toBe(false);
    await screenshot(page, '01-defaults');
    await expectNoAccessibilityViolations();
  });

  it('reaches the toggle with Tab, operates it with the keyboard, and shows the https error next to the URL field', async () => {
    await page.getByRole('button', { name: 'Use token' }).focus();
    await page.keyboard.press('Tab');
    expect(await isFocused(webhookSwitch('Rate spike'))).toBe(true);
    await page.keyboard.press('Space');
    expect(await webhookSwitch('Rate spike').isChecked()).toBe(true);

    await page.keyboard.press('Tab');
    expect(await isFocused(urlField('Rate spike'))).toBe(true);
    await page.keyboard.type(receiver.url('/hook').replace('https:', 'http:'));
    await page.keyboard.press('Enter');

    const error = page.locator('#RATE_SPIKE-url-error');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/https/);
    expect(await urlField('Rate spike').getAttribute('aria-invalid')).toBe('true');
    expect(await urlField('Rate spike').getAttribute('aria-describedby')).toBe('RATE_SPIKE-url-error');
    await screenshot(page, '02-field-error');
    await expectNoAccessibilityViolations();
  });

  it('reveals the signing secret once, with a copy button and "you will not see this again"', async () => {
    await urlField('Rate spike').fill(receiver.url('/hook'));
    await page.getByRole('button', { name: 'Save webhook for Rate spike' }).click();

    await secretPanel().waitFor();
    expect(await secretPanel().textContent()).toContain('you will not see this again');
    shownSecret = (await page.locator('#secret-value').textContent()) ?? '';
    expect(shownSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await page.locator('#RATE_SPIKE-url-error').count()).toBe(0);

    await page.getByRole('button', { name: 'Copy secret' }).click();
    await expect.poll(() => secretPanel().textContent()).toContain('Copied to the clipboard');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shownSecret);
    await screenshot(page, '03-secret-once');
    await expectNoAccessibilityViolations();
  });

  it('no longer shows the secret after a reload', async () => {
    await page.reload();
    await rowOf('Rate spike').getByText('Signing secret set').waitFor();
    expect(await webhookSwitch('Rate spike').isChecked()).toBe(true);
    expect(await secretPanel().count()).toBe(0);
    expect(
      await page.locator('body').evaluate((body) => body.innerHTML + document.querySelector('webhook-settings')?.shadowRoot?.innerHTML),
    ).not.toContain(shownSecret);
    await screenshot(page, '04-after-reload');
  });

  it('rotates the secret after a confirmation and reveals the new one once', async () => {
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret for Rate spike' }).click();

    await secretPanel().waitFor();
    const rotated = (await page.locator('#secret-value').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(shownSecret);
    shownSecret = rotated;
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await secretPanel().count()).toBe(0);
  });

  it('sends a test event to the receiver, signed with the (rotated) secret that was shown, and shows its outcome', async () => {
    receiver.respondWith({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok from the receiver' });
    await page.getByRole('button', { name: 'Send test event for Rate spike' }).click();

    const [request] = await receiver.waitForRequests(1);
    const timestamp = String(request.headers['x-service-timestamp']);
    const expected = createHmac('sha256', shownSecret).update(`${timestamp}.`).update(request.rawBody).digest('hex');
    expect(request.headers['x-service-signature']).toBe(`v1=${expected}`);

    const result = rowOf('Rate spike').getByRole('status');
    await expect.poll(() => result.textContent()).toMatch(/Test send: delivered \(success\), HTTP 200 in \d+ ms/);
    expect(await result.textContent()).toContain('ok from the receiver');
    await screenshot(page, '05-test-send');
  });

  it('shows a delivered event in the log with its attempt, and a redelivery as a second attempt', async () => {
    receiver.clear();
    receiver.respondWith({ status: 200, body: 'stored event' });
    const published = await fetch(`${service.url}/api/v1/internal/notifications/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.internalToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: USER_ID, type: 'RATE_SPIKE', severity: 'WARNING', title: 'USD rate spiked', body: '0.02% → 0.08%' }),
    });
    expect(published.status).toBe(202);
    const [first] = await receiver.waitForRequests(1);

    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh log' }).click();
        return logRow(/^#\d+$/)
          .first()
          .textContent();
      }, REFRESHING)
      .toMatch(/DELIVERED\s*1/);
    // Its sequence, as the receiver got it in X-Service-Sequence (the first event published to this URL: test sends have none).
    const [logged] = await deliveriesLogged();
    expect(logged).toMatchObject({ eventId: first.eventId, sequence: 1 });
    expect(first.headers['x-service-sequence']).toBe('1');
    expect(await shownSequence(logged.id)).toBe('1');
    const showAttempts = page.getByRole('button', { name: /^Show attempts of delivery/ }).first();
    await showAttempts.click();
    const attempts = page.locator('table.attempts tbody tr');
    await attempts.first().waitFor();
    expect(await attempts.count()).toBe(1);
    expect(await attempts.first().textContent()).toMatch(/1.*success.*200.*\d+ ms.*stored event/s);
    await screenshot(page, '06-delivery-log');
    await expectNoAccessibilityViolations();

    await page
      .getByRole('button', { name: /^Redeliver delivery/ })
      .first()
      .click();
    const notice = page.getByRole('status').filter({ hasText: 'being sent again' });
    await notice.waitFor();
    const redeliveryId = /as delivery #(\d+)/.exec((await notice.textContent()) ?? '')?.[1];
    expect(redeliveryId).toBeDefined();
    const [again] = await receiver.waitForRequests(2).then((requests) => requests.slice(1));
    expect(again.eventId).toBe(first.eventId);
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh log' }).click();
        return logRow(Number(redeliveryId)).textContent();
      }, REFRESHING)
      .toMatch(/DELIVERED\s*1/);
    expect(await shownSequence(Number(redeliveryId))).toBe('1'); // a redelivery keeps its event's number
    expect(again.headers['x-service-sequence']).toBe('1');
    await expect.poll(() => attempts.count(), REFRESHING).toBe(2); // one attempt in each delivery's table
    for (const caption of await page.locator('table.attempts caption').allTextContents()) expect(caption).toContain(first.eventId);
    await screenshot(page, '07-redelivered');
  });

  it('shows a failing webhook: a "Failing" badge and since when, how many attempts in a row, the last status', async () => {
    receiver.clear();
    receiver.respondWith({ status: 503, body: 'down for maintenance' });
    await publish('RATE_SPIKE', 'EUR rate spiked');
    await receiver.waitForRequests(1);
    // The health rows trail the recorded attempt by one batch.
    await expect.poll(async () => (await healthOf('RATE_SPIKE'))?.state, REFRESHING).toBe('FAILING');
    expect(await healthOf('RATE_SPIKE')).toMatchObject({ failedAttemptsInRow: 1, lastAttempt: { statusCode: 503 } });

    await page.reload();
    const health = healthBlock('Rate spike');
    await health.getByText(/Failing since/).waitFor();
    expect(await health.locator('.badge').textContent()).toBe('Health of the webhook for Rate spike: Failing');
    expect(await health.locator('.badge').getAttribute('class')).toContain('badge-failing');
    expect((await health.locator('p').first().textContent())?.replace(/\s+/g, ' ').trim()).toMatch(
      new RegExp(`Failing since ${SHOWN_TIME}, 1 failed attempt in a row, last: HTTP 503$`),
    );
    expect(await health.getByRole('button').count()).toBe(0); // only a DISABLED webhook offers "Re-enable and recover"
    await screenshot(page, '08-failing');
    await expectNoAccessibilityViolations();
  });

  it('re-enables a webhook the service disabled and queues again what failed meanwhile, in one step', async () => {
    // A second webhook, saved as a user would; then what auto-disable leaves after hours of failures (written into the
    // service's database: the real clock would take 5 hours), with one delivery that ended FAILED meanwhile.
    const loansUrl = receiver.url('/loans');
    const saved = await settingsCall('PUT', '', { type: 'LOAN_EXPIRING', channel: 'WEBHOOK', enabled: true, webhookUrl: loansUrl });
    expect(saved.status).toBe(200);
    const now = Date.now();
    const disabledAt = now - 10 * 60_000;
    const reason = `disabled after 12 consecutive failed deliveries on ${new Date(disabledAt).toISOString()}`;
    const eventId = writeDisabledWebhook(service.dbPath, {
      userId: USER_ID,
      type: 'LOAN_EXPIRING',
      disabledReason: reason,
      failingSince: now - 5 * 60 * 60_000,
      disabledAt,
      failedAttempts: 12,
    });
    expect((await healthOf('LOAN_EXPIRING'))?.state).toBe('DISABLED');

    await page.reload();
    const health = healthBlock('Loan expiring');
    const reenable = page.getByRole('button', { name: 'Re-enable and recover the webhook for Loan expiring' });
    await reenable.waitFor();
    expect(await health.locator('.badge').textContent()).toBe('Health of the webhook for Loan expiring: Disabled');
    expect((await health.locator('p').first().textContent())?.replace(/\s+/g, ' ').trim()).toContain(`Disabled by the service: ${reason}`);
    expect(await webhookSwitch('Loan expiring').isChecked()).toBe(false);
    await screenshot(page, '09-disabled');
    await expectNoAccessibilityViolations();

    receiver.clear(); // still answering 503: the recovered delivery stays PENDING, waiting for its retry
    await reenable.click();
    const outcome = health.getByRole('status');
    await expect.poll(() => outcome.textContent(), REFRESHING).toBe('Re-enabled; 1 failed delivery queued again.');
    await expect.poll(() => webhookSwitch('Loan expiring').isChecked(), REFRESHING).toBe(true);
    expect(await reenable.count()).toBe(0);
    expect(await health.locator('.badge').textContent()).not.toMatch(/Disabled$/);
    expect(await page.getByRole('alert').count()).toBe(0);

    // Through the API: the webhook is on again at the same URL, and the failed event has a PENDING delivery again.
    const effective = await settingsCall<Array<{ type: string; channel: string; enabled: boolean; webhookUrl?: string }>>(
      'GET',
      '/effective',
    );
    expect(effective.data.find((row) => row.type === 'LOAN_EXPIRING' && row.channel === 'WEBHOOK')).toMatchObject({
      enabled: true,
      webhookUrl: loansUrl,
    });
    expect(effective.data.find((row) => row.type === 'LOAN_EXPIRING' && row.channel === 'WEBHOOK')).not.toHaveProperty(
      'disabledReasonCode',
    );
    const log = await settingsCall<{ data: Array<{ eventId: string; type: string; status: string }> }>(
      'GET',
      '/webhook-deliveries?limit=20',
    );
    const cycles = log.data.data.filter((delivery) => delivery.eventId === eventId);
    expect(cycles.map((delivery) => delivery.status)).toEqual(['PENDING', 'FAILED']);
    // Queued before the service numbered deliveries (written as an older version left it): no sequence, shown as "—".
    const failed = (await deliveriesLogged()).find((delivery) => delivery.eventId === eventId && delivery.status === 'FAILED')!;
    expect(failed.sequence).toBeNull();
    await page.getByRole('button', { name: 'Refresh log' }).click();
    await expect.poll(() => shownSequence(failed.id), REFRESHING).toBe('—');
    await expect.poll(() => receiver.requests.some((request) => request.eventId === eventId), REFRESHING).toBe(true); // sent again
    await screenshot(page, '10-reenabled');
    await expectNoAccessibilityViolations();
    receiver.respondWith({ status: 200, body: 'ok' });
  });

  it('tells the user to wait when the service answers 429 with Retry-After', async () => {
    const sendTest = page.getByRole('button', { name: 'Send test event for Rate spike' });
    const alert = page.getByRole('alert');
    const testSends = () => receiver.requests.filter((r) => r.eventId?.startsWith('test_')).length;
    // One more than the limit allows within a minute; a window that ended meanwhile (a very slow run) only costs a click.
    for (let click = 0; click <= TEST_SENDS_PER_MINUTE && (await alert.count()) === 0; click++) {
      const sent = testSends();
      await sendTest.click();
      await expect.poll(async () => (await alert.count()) > 0 || testSends() > sent, { timeout: 15_000 }).toBe(true);
    }

    expect(await alert.textContent()).toMatch(/Too many requests: please wait \d+ s before trying again/);
    await screenshot(page, '11-rate-limited');
    await expectNoAccessibilityViolations();
  });

  it('switches a webhook to Ed25519 as well, shows its public key, and a delivery verifies with that key alone', async () => {
    const scheme = page.getByRole('combobox', { name: 'Signature of the webhook for Rate spike' });
    expect(await scheme.inputValue()).toBe('hmac');
    expect(await rowOf('Rate spike').locator('.public-key').count()).toBe(0);
    await scheme.selectOption({ label: 'Both' });

    const shownKey = rowOf('Rate spike').locator('.public-key code');
    await expect.poll(() => shownKey.count()).toBe(1);
    const publicKey = (await shownKey.textContent())!.trim();
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const listed = await settingsCall<Array<{ type: string; channel: string; signatureSchemes: string[]; signingPublicKey: string }>>(
      'GET',
      '',
    );
    expect(listed.data.find((row) => row.type === 'RATE_SPIKE' && row.channel === 'WEBHOOK')).toMatchObject({
      signatureSchemes: ['hmac', 'ed25519'],
      signingPublicKey: publicKey,
    });
    expect(await scheme.inputValue()).toBe('hmac,ed25519');

    receiver.clear();
    await publish('RATE_SPIKE', 'Signed twice');
    const [request] = await receiver.waitForRequests(1);
    const signed = Buffer.concat([
      Buffer.from(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.`),
      request.rawBody,
    ]);
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url') },
      format: 'jwk',
    });
    const v1a = String(request.headers['webhook-signature'])
      .split(' ')
      .filter((entry) => entry.startsWith('v1a,'));
    expect(v1a).toHaveLength(1);
    expect(verify(null, signed, key, Buffer.from(v1a[0].slice(4), 'base64'))).toBe(true);
    expect(request.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/); // HMAC kept
    await screenshot(page, '12-ed25519');
    await expectNoAccessibilityViolations();
  });

  it('turns ordered delivery on with its switch: the API has it on for the URL, and a reload shows it on', async () => {
    const orderedUrl = receiver.url('/ordered');
    const saved = await settingsCall('PUT', '', { type: 'RATE_DROP', channel: 'WEBHOOK', enabled: true, webhookUrl: orderedUrl });
    expect(saved.status).toBe(200);
    await page.reload();
    const toggle = orderedSwitch('Rate drop');
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    const help = page.locator(`#${await toggle.getAttribute('aria-describedby')}`);
    expect((await help.textContent())?.replace(/\s+/g, ' ')).toMatch(
      /one delivery at a time, in the order the events were published.*being retried, the ones after it wait: up to 5 h 21 min/,
    );
    await expectNoAccessibilityViolations();

    await toggle.click();
    await page.getByRole('status').filter({ hasText: 'ordered delivery is on' }).waitFor();
    const rows = (await settingsCall<Array<{ type: string; channel: string; orderedDelivery?: boolean; webhookUrl?: string }>>('GET', ''))
      .data;
    expect(rows.find((row) => row.type === 'RATE_DROP' && row.channel === 'WEBHOOK')).toMatchObject({
      orderedDelivery: true,
      webhookUrl: orderedUrl,
    });
    // Per URL: the webhook posting elsewhere keeps its own setting.
    expect(rows.find((row) => row.type === 'RATE_SPIKE' && row.channel === 'WEBHOOK')).toMatchObject({ orderedDelivery: false });

    await page.reload();
    await orderedSwitch('Rate drop').waitFor();
    expect(await orderedSwitch('Rate drop').isChecked()).toBe(true);
    expect(await orderedSwitch('Rate spike').isChecked()).toBe(false);
    await screenshot(page, '13-ordered-on');
    await expectNoAccessibilityViolations();
  });

  it('shows in the log the sequence number each delivery was sent with', async () => {
    receiver.clear();
    await publish('RATE_DROP', 'Ordered one');
    await receiver.waitForDelivery({ path: '/ordered' });
    await publish('RATE_DROP', 'Ordered two');
    const requests = await receiver.waitForDelivery({ path: '/ordered', count: 2 });
    const sent = requests.map((request) => Number(request.headers['x-service-sequence']));
    expect(sent).toEqual([1, 2]); // a URL of its own counts from 1

    const logged = (await deliveriesLogged()).filter((delivery) => delivery.type === 'RATE_DROP');
    expect(logged.map((delivery) => delivery.sequence)).toEqual([2, 1]); // newest first
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh log' }).click();
        return Promise.all(logged.map((delivery) => shownSequence(delivery.id)));
      }, REFRESHING)
      .toEqual(['2', '1']);
  });

  it('says how many deliveries wait, and behind which, while ordered delivery holds them behind a retrying one', async () => {
    receiver.clear();
    receiver.respondWith({ status: 503, body: 'not now' }, { path: '/ordered' });
    await publish('RATE_DROP', 'Held up');
    const [held] = await receiver.waitForDelivery({ path: '/ordered' });
    await publish('RATE_DROP', 'Waiting one');
    await publish('RATE_DROP', 'Waiting two');
    // The first is retried in a minute (503); the two published after it wait for it, unsent.
    await expect.poll(async () => (await healthOf('RATE_DROP'))?.waitingBehind, REFRESHING).toBe(2);
    const health = (await healthOf('RATE_DROP'))!;
    expect(health).toMatchObject({ orderedDelivery: true, orderedHead: { type: 'RATE_DROP', sequence: 3 } });
    expect(held.headers['x-service-sequence']).toBe('3');
    expect(receiver.requests.filter((request) => request.path === '/ordered')).toHaveLength(1);

    await page.reload();
    const line = healthBlock('Rate drop').locator('.ordered-wait');
    await line.waitFor();
    expect((await line.textContent())?.replace(/\s+/g, ' ').trim()).toMatch(
      new RegExp(
        `^Ordered delivery: 2 deliveries waiting behind delivery #${health.orderedHead!.deliveryId} ` +
          `\\(Rate drop, sequence 3; 1 attempt so far; last: receiver answered 503; next try ${SHOWN_TIME}\\)$`,
      ),
    );
    expect(await healthBlock('Rate spike').locator('.ordered-wait').count()).toBe(0); // not ordered: no such line
    await screenshot(page, '14-ordered-waiting');
    await expectNoAccessibilityViolations();
  });

  it('ran the whole session without breaking its Content-Security-Policy', () => {
    expect(cspViolations).toEqual([]);
  });
});
