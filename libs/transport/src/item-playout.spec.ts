import { ItemPlayout } from './item-playout';

/** 24 kHz 16-bit mono: the bytes of `ms` of audio. */
const bytes = (ms: number) => ms * 48;

describe('ItemPlayout: the playout clock, item by item', () => {
  it('plays each chunk from its receipt or the end of the one before; a gap in arrival is an underrun, not a skip', () => {
    const p = new ItemPlayout();
    p.add(0, 'a', 0, bytes(200), 24_000);
    expect(p.played('a', 0.1).played_ms).toBeCloseTo(100, 6);
    // Played out at 0.2 s; nothing plays until 0.25 s.
    expect(p.played('a', 0.24).played_ms).toBeCloseTo(200, 6);
    p.add(0.25, 'a', 0, bytes(400), 24_000);
    expect(p.played('a', 0.25).played_ms).toBeCloseTo(200, 6);
    expect(p.played('a', 0.5)).toEqual({ key: 'a', content_index: 0, played_ms: expect.closeTo(450, 6), received_ms: expect.closeTo(600, 6) });
    // Played out: exactly what was received.
    const all = p.played('a', 10);
    expect(all.played_ms).toBe(all.received_ms);
  });

  it('queues an item behind the one playing: the item playing is the one the user hears, not the last received', () => {
    const p = new ItemPlayout();
    p.add(0, 'a', 0, bytes(1000), 24_000);
    p.add(0.1, 'b', 0, bytes(500), 24_000);
    expect(p.playingAt(0.5)).toMatchObject({ key: 'a', played_ms: expect.closeTo(500, 6) });
    expect(p.playingAt(1.2)).toMatchObject({ key: 'b', played_ms: expect.closeTo(200, 6), received_ms: expect.closeTo(500, 6) });
    // After the last: the last item, played out.
    expect(p.playingAt(5)).toMatchObject({ key: 'b', played_ms: expect.closeTo(500, 6) });
    expect(p.playingAt(-1)).toBeNull();
  });

  it('keeps two numbers per item however often it underruns, and still reads the played ms', () => {
    const p = new ItemPlayout();
    // 1,000 chunks of 40 ms, each 10 ms after the one before has played: 1,000 underruns.
    for (let i = 0; i < 1000; i++) p.add(i * 0.05, 'a', 0, bytes(40), 24_000);
    const item = (p as unknown as { items: Array<{ plays: number[] }> }).items[0];
    expect(item.plays).toHaveLength(2);
    // At 49.97 s: 999 chunks played whole, and 20 ms of the last.
    expect(p.played('a', 49.97).played_ms).toBeCloseTo(999 * 40 + 20, 3);
  });

  it('keeps items by content index, drops those before the one playing, and forgets on request', () => {
    const p = new ItemPlayout();
    p.add(0, 'a', 0, bytes(100), 24_000);
    p.add(0.2, 'a', 1, bytes(100), 24_000);
    expect(p.playingAt(0.25)).toMatchObject({ key: 'a', content_index: 1 });
    p.dropPlayedBefore(0.25);
    expect(p.played('a', 1, 0).received_ms).toBe(0);
    p.forget('a');
    expect(p.playingAt(1)).toBeNull();
  });
});
