import { claimModeFor, distributedServerOf, lacksSkipLocked } from './claim-mode';

// What the servers report for SELECT VERSION().
const MARIADB = '10.11.19-MariaDB-0+deb12u1';
const MYSQL = '8.4.3';
const TIDB = '8.0.11-TiDB-v8.5.1';
const VITESS = '8.0.30-Vitess';
const VITESS_OLD = '5.7.9-vitess-19.0.4';

describe('claim mode', () => {
  it('tells TiDB and Vitess apart from MySQL and MariaDB by their version strings', () => {
    expect([MARIADB, MYSQL, TIDB, VITESS, VITESS_OLD].map(distributedServerOf)).toEqual([null, null, 'TiDB', 'Vitess', 'Vitess']);
  });

  it('keeps SKIP LOCKED on MySQL and MariaDB unless told otherwise', () => {
    expect(claimModeFor(MARIADB, undefined)).toBe('skip-locked');
    expect(claimModeFor(MYSQL, undefined)).toBe('skip-locked');
    expect(claimModeFor(MARIADB, 'conditional-update')).toBe('conditional-update');
  });

  it('knows which MySQL and MariaDB releases lack SKIP LOCKED (MySQL before 8.0.1, MariaDB before 10.6)', () => {
    const versions = ['8.0.0', '8.0.1', '5.7.44-log', '8.0.36-28', '10.5.27-MariaDB', '10.6.0-MariaDB', '5.5.5-10.4.34-MariaDB-1', MARIADB];
    expect(versions.map(lacksSkipLocked)).toEqual([
      'MySQL 8.0.1',
      null,
      'MySQL 8.0.1',
      null,
      'MariaDB 10.6.0',
      null,
      'MariaDB 10.6.0',
      null,
    ]);
  });

  it('refuses to start on a server without SKIP LOCKED unless the conditional update is configured, in one line saying what to do', () => {
    expect(() => claimModeFor('10.5.27-MariaDB', undefined)).toThrow(
      /^The database \(version 10\.5\.27-MariaDB\) has no SELECT … FOR UPDATE SKIP LOCKED.*since MariaDB 10\.6\.0.*upgrade it, or set delivery\.claimMode \(DELIVERY_CLAIM_MODE\) to conditional-update\.$/,
    );
    expect(() => claimModeFor('5.7.44', 'skip-locked')).toThrow(/since MySQL 8\.0\.1/);
    expect(claimModeFor('5.7.44', 'conditional-update')).toBe('conditional-update');
  });

  it('claims with the conditional update alone on TiDB and Vitess', () => {
    for (const version of [TIDB, VITESS, VITESS_OLD]) {
      expect(claimModeFor(version, undefined)).toBe('conditional-update');
      expect(claimModeFor(version, 'conditional-update')).toBe('conditional-update');
    }
  });

  it('refuses to start with skip-locked configured on TiDB or Vitess, saying what to set', () => {
    expect(() => claimModeFor(TIDB, 'skip-locked')).toThrow(
      /database is TiDB \(version 8\.0\.11-TiDB-v8\.5\.1\).*set delivery\.claimMode \(DELIVERY_CLAIM_MODE\) to conditional-update/,
    );
    expect(() => claimModeFor(VITESS, 'skip-locked')).toThrow(/database is Vitess/);
  });
});
