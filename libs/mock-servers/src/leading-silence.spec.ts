import { firstVoicedMs } from '@duplex-bench/audio';
import { LeadingSilence } from './leading-silence';

const b64 = (s: string) => Buffer.from(s, 'latin1');

describe('LeadingSilence', () => {
  it('sends whole silent units, then the unit the voice starts in, then voiced units, each a whole unit long', () => {
    const leading = new LeadingSilence(22050, 80, 300);
    const units = [0, 1, 2, 3, 4].map((i) => leading.payload(i));
    expect(units.map((u) => Buffer.from(u, 'base64').length)).toEqual(Array(5).fill(1764 * 2));
    const voiced = units.map((u) => firstVoicedMs(b64(u), 22050));
    expect([voiced[0], voiced[1], voiced[2], voiced[4]]).toEqual([null, null, null, 0]);
    // 300 ms in: 60 ms into the fourth unit, found in the 10 ms window it starts in (or the one before, loud enough).
    expect(voiced[3]).toBeGreaterThanOrEqual(50);
    expect(voiced[3]).toBeLessThanOrEqual(60);
    // Encoded once: the same string each time.
    expect(leading.payload(7)).toBe(units[4]);
  });

  it('speaks from the first unit with no silence', () => {
    expect(firstVoicedMs(b64(new LeadingSilence(24000, 80, 0).payload(0)), 24000)).toBe(0);
  });
});
