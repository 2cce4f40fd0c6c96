import { pack } from 'msgpackr';
import { decodeSamples, encodeSamples, SAMPLES_PART_PACKETS, SampleStore, samplesFileOf, type SessionSampleColumns } from './samples';
import { mergeSamples } from './merge';
import { PacingRecorder, type PacketTimes } from './pacing-recorder';

function packet(seq: number, origin_s: number, dev_ms: number): PacketTimes {
  const start_s = origin_s + (seq * 80 + dev_ms) / 1000;
  return { seq, scheduled_s: origin_s + seq * 0.08, start_s, completed_s: start_s + 0.0003, send_ms: 0.3, buffered_bytes: 0 };
}

describe('SampleStore', () => {
  it('keeps every packet in typed columns, past the initial capacity', () => {
    const store = new SampleStore(80);
    const column = store.open('s1');
    const packets = Array.from({ length: 200 }, (_, seq) => packet(seq, 100, seq % 7));
    for (const p of packets) column.push(p);
    store.open('idle');

    const file = store.toFile(new PacingRecorder(80));
    expect(file).toMatchObject({ format: 'duplex-bench.samples', version: 1, packet_ms: 80 });
    const [s1, idle] = file.sessions;
    expect(s1.id).toBe('s1');
    expect(s1.seq).toBeInstanceOf(Int32Array);
    for (const k of ['scheduled_s', 'start_s', 'completed_s', 'send_ms', 'deviation_ms'] as const) {
      expect(s1[k]).toBeInstanceOf(Float64Array);
      expect(s1[k]).toHaveLength(200);
    }
    expect(Array.from(s1.seq)).toEqual(packets.map((p) => p.seq));
    expect(Array.from(s1.start_s)).toEqual(packets.map((p) => p.start_s));
    expect(Array.from(s1.completed_s)).toEqual(packets.map((p) => p.completed_s));
    // Deviation from packet 0's send start, signed.
    for (let i = 0; i < 200; i++) expect(s1.deviation_ms[i]).toBeCloseTo(i % 7, 6);
    expect(idle.id).toBe('idle');
    expect(idle.seq).toHaveLength(0);
  });

  it('comes back from samples.msgpack with its typed arrays typed', () => {
    const store = new SampleStore(80);
    const a = store.open('a');
    for (let seq = 0; seq < 70; seq++) a.push(packet(seq, 5, -seq / 10));
    const b = store.open('b');
    b.push(packet(0, 6, 0));
    store.open('idle');
    const file = store.toFile(new PacingRecorder(80));

    const back = decodeSamples(encodeSamples(file));
    expect(back).toEqual(file);
    for (const s of back.sessions) {
      expect(s.seq).toBeInstanceOf(Int32Array);
      expect(s.scheduled_s).toBeInstanceOf(Float64Array);
      expect(s.start_s).toBeInstanceOf(Float64Array);
      expect(s.completed_s).toBeInstanceOf(Float64Array);
      expect(s.send_ms).toBeInstanceOf(Float64Array);
      expect(s.deviation_ms).toBeInstanceOf(Float64Array);
    }
    expect(back.sessions.map((s) => s.seq.length)).toEqual([70, 1, 0]);
    expect(Array.from(back.sessions[0].deviation_ms)).toEqual(Array.from(file.sessions[0].deviation_ms));
  });

  it('with spillTo, lets the columns of a session go as it ends, and the file of spilled values plus the last reads as the whole', () => {
    const kept = new SampleStore(80);
    const spilling = new SampleStore(80);
    const chunks: Uint8Array[] = [];
    spilling.spillTo((bytes) => chunks.push(bytes));
    const sessions = ['a', 'b', 'c'].map((id) => [kept.open(id), spilling.open(id)]);
    sessions.forEach(([k, s], n) => {
      for (let seq = 0; seq < 50 * (n + 1); seq++) {
        k.push(packet(seq, n, seq % 5));
        s.push(packet(seq, n, seq % 5));
      }
    });
    // a and c end (in that order); b is still sending when the file is written.
    for (const i of [0, 2]) sessions[i].forEach((col) => col.end());
    sessions[0][1].end(); // a second end changes nothing
    expect(spilling.spilled).toBe(2);
    expect(chunks).toHaveLength(2);
    // What stays in memory is the session still in flight.
    expect(spilling.toFile(new PacingRecorder(80)).sessions.map((s) => s.id)).toEqual(['b']);

    const file = Buffer.concat([...chunks, encodeSamples(spilling.toFile(new PacingRecorder(80)))]);
    const back = decodeSamples(file);
    expect(back.sessions.map((s) => s.id)).toEqual(['a', 'c', 'b']);
    const whole = kept.toFile(new PacingRecorder(80));
    for (const s of back.sessions) expect(s).toEqual(whole.sessions.find((w) => w.id === s.id));
    // Without spillTo an end keeps the columns.
    expect(whole.sessions).toHaveLength(3);
  });

  it('with spillTo, lets a long session go a part at a time, never holds more than a part of it, and reads back whole', () => {
    const kept = new SampleStore(80);
    const spilling = new SampleStore(80);
    const chunks: Uint8Array[] = [];
    spilling.spillTo((bytes) => chunks.push(bytes));
    const long = [kept.open('long'), spilling.open('long')];
    const short = [kept.open('short'), spilling.open('short')];
    // 2.6 parts' worth of one session (its first part is half a part: it was opened first), a short one between.
    const n = Math.floor(2.6 * SAMPLES_PART_PACKETS);
    for (let seq = 0; seq < n; seq++) {
      for (const col of long) col.push(packet(seq, 10, seq % 9));
      if (seq === SAMPLES_PART_PACKETS + 5) {
        for (const col of short) {
          col.push(packet(0, 11, 0));
          col.end();
        }
      }
      // In memory, at most one part of the long session at any time.
      expect((spilling.sessionColumns('long') as SessionSampleColumns).seq.length).toBeLessThan(SAMPLES_PART_PACKETS);
    }
    // The long one's parts at 512, 1,536 and 2,560 packets; the short one's between.
    expect(chunks).toHaveLength(4);
    long.forEach((col) => col.end());
    expect(chunks).toHaveLength(5);
    expect(spilling.spilled).toBe(5);
    expect(spilling.toFile(new PacingRecorder(80)).sessions).toEqual([]);
    const back = decodeSamples(Buffer.concat([...chunks, encodeSamples(spilling.toFile(new PacingRecorder(80)))]));
    expect(back.sessions.map((s) => [s.id, s.seq.length])).toEqual([
      ['long', n],
      ['short', 1],
    ]);
    // Every part's deviations are from the session's packet 0, as if it had never been cut.
    const whole = kept.toFile(new PacingRecorder(80));
    for (const s of back.sessions) expect(s).toEqual(whole.sessions.find((w) => w.id === s.id));
    expect(back.sessions[0].deviation_ms[2 * SAMPLES_PART_PACKETS + 1]).toBeCloseTo((2 * SAMPLES_PART_PACKETS + 1) % 9, 6);
  });

  it('cuts the first parts of sessions opened together at different lengths, so their encodings fall on different ticks', () => {
    const store = new SampleStore(80);
    const at: number[] = [];
    store.spillTo(() => at.push(seq));
    let seq = 0;
    const columns = Array.from({ length: 64 }, (_, i) => store.open(`s${i}`));
    for (; seq < SAMPLES_PART_PACKETS; seq++) for (const c of columns) c.push(packet(seq, 0, 0));
    expect(at).toHaveLength(64);
    expect(new Set(at).size).toBe(64);
    expect(Math.min(...at)).toBeGreaterThanOrEqual(SAMPLES_PART_PACKETS / 2 - 1);
  });

  it('refuses bytes that are not a samples file', () => {
    expect(() => decodeSamples(pack({ format: 'something.else' }))).toThrow(/not a duplex-bench samples file/);
    expect(() => decodeSamples(pack(null))).toThrow(/not a duplex-bench samples file/);
    const last = encodeSamples(new SampleStore(80).toFile(new PacingRecorder(80)));
    expect(() => decodeSamples(Buffer.concat([pack({ other: 1 }), last]))).toThrow(/not a session/);
  });
});

describe('samplesFileOf', () => {
  it('builds histograms from the chosen sessions alone, and pools like the recorder that saw them', () => {
    const store = new SampleStore(80);
    const recorder = new PacingRecorder(80);
    const a = store.open('a');
    const b = store.open('b');
    for (let seq = 0; seq < 50; seq++) {
      for (const [col, origin, dev] of [[a, 1, seq % 5], [b, 2, seq === 30 ? 95 : 1]] as const) {
        const p = packet(seq, origin, seq === 0 ? 0 : dev);
        col.push(p);
        recorder.record(p, origin);
      }
    }
    const both = mergeSamples([samplesFileOf([store.sessionColumns('a'), store.sessionColumns('b')].map((s) => s as SessionSampleColumns), 80)]);
    const whole = mergeSamples([store.toFile(recorder)]);
    expect(both.pacing_deviation_ms).toEqual(whole.pacing_deviation_ms);
    expect(both.packets).toEqual({ sent: 100, late: 1 });
    // Session a alone: its histograms hold none of b's late packet.
    const onlyA = mergeSamples([samplesFileOf([store.sessionColumns('a') as SessionSampleColumns], 80)]);
    expect(onlyA.packets).toEqual({ sent: 50, late: 0 });
    expect(onlyA.pacing_deviation_ms.max).toBeLessThan(5);
    expect(store.sessionColumns('never')).toBeNull();
  });
});
