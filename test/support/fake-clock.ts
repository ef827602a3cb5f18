// The clock lives in the testing kit (src/testing); this name keeps older imports working.
export { TestClock as FakeClock } from '../../src/testing';
