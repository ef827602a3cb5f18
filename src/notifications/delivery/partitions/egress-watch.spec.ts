import { describe, expect, it } from 'vitest';
import { EGRESS_STAND_DOWN_MS, EGRESS_WINDOW_MS, EgressWatch } from './egress-watch';

const T = 1_800_000_000_000;
const others = (answeredAt: number | null) => [
  { holder: 'me', aliveUntil: T + 60_000, answeredAt: null },
  { holder: 'other', aliveUntil: T + 60_000, answeredAt },
];

/** A watch that saw `endpoints` unreachable from here, one a second from T. */
function watchWithUnreachable(endpoints: number): EgressWatch {
  const watch = new EgressWatch();
  for (let i = 0; i < endpoints; i++) watch.noteRequest(`1 host-${i}`, false, T + i * 1_000);
  return watch;
}

describe('EgressWatch: an instance that reaches no receiver while another does stands down', () => {
  it('stands down when three endpoints were unreachable from here, none answered, and another instance got an answer', () => {
    expect(watchWithUnreachable(3).standsDown(T + 5_000, 'me', others(T + 4_000))).toBe(true);
  });

  it('does not for two endpoints: two receivers down is their problem, not this network', () => {
    expect(watchWithUnreachable(2).standsDown(T + 5_000, 'me', others(T + 4_000))).toBe(false);
  });

  it('does not when no other instance got an answer either (the receivers, or every network, are down)', () => {
    expect(watchWithUnreachable(5).standsDown(T + 5_000, 'me', others(null))).toBe(false);
    expect(watchWithUnreachable(5).standsDown(T + 5_000, 'me', others(T - EGRESS_WINDOW_MS))).toBe(false);
    expect(watchWithUnreachable(5).standsDown(T + 5_000, 'me', [{ holder: 'me', aliveUntil: T + 60_000, answeredAt: T + 4_000 }])).toBe(
      false,
    );
  });

  it('does not while a receiver answered it within the window, and an answer clears what failed before', () => {
    const watch = watchWithUnreachable(3);
    watch.noteRequest('2 up', true, T + 3_500);
    expect(watch.standsDown(T + 5_000, 'me', others(T + 4_000))).toBe(false);
    // A minute after that answer, the three failures before it no longer count.
    expect(watch.standsDown(T + 3_500 + EGRESS_WINDOW_MS + 1, 'me', others(T + EGRESS_WINDOW_MS))).toBe(false);
    expect(watch.answeredAt).toBe(T + 3_500);
  });

  it('forgets failures older than the window', () => {
    expect(watchWithUnreachable(3).standsDown(T + EGRESS_WINDOW_MS + 500, 'me', others(T + EGRESS_WINDOW_MS))).toBe(false);
  });

  it('stays down for the stand-down time, then takes part again and needs fresh signs to stand down again', () => {
    const watch = watchWithUnreachable(3);
    expect(watch.standsDown(T + 5_000, 'me', others(T + 4_000))).toBe(true);
    expect(watch.standsDown(T + 5_000 + EGRESS_STAND_DOWN_MS - 1, 'me', others(null))).toBe(true);
    // Its last attempts failed as it stood down: they do not count once it is back.
    watch.noteRequest('1 host-9', false, T + 8_000);
    const back = T + 5_000 + EGRESS_STAND_DOWN_MS;
    expect(watch.standsDown(back, 'me', others(back - 1_000))).toBe(false);
    for (let i = 0; i < 3; i++) watch.noteRequest(`1 host-${i}`, false, back + i);
    expect(watch.standsDown(back + 5_000, 'me', others(back + 4_000))).toBe(true);
  });
});
