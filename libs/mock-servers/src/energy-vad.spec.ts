import { ENERGY_VAD, EnergyVad, type VadEdge } from './energy-vad';
import { scriptedInput } from './behaviour.spec-helpers';

const RATE = 16000;
/** `ms` of a 440 Hz tone at `dbfs` RMS, or silence. */
function tone(ms: number, dbfs: number | null): Buffer {
  const n = (RATE * ms) / 1000;
  const out = Buffer.alloc(n * 2);
  if (dbfs === null) return out;
  const amp = 32768 * 10 ** (dbfs / 20) * Math.SQRT2;
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(amp * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
  return out;
}

function edges(pcm: Buffer, chunk_bytes = 2560): VadEdge[] {
  const vad = new EnergyVad(RATE);
  const out: VadEdge[] = [];
  for (let at = 0; at < pcm.length; at += chunk_bytes) vad.push(pcm.subarray(at, at + chunk_bytes), (e) => out.push(e));
  return out;
}

const ms = (e: VadEdge) => ({ kind: e.kind, ms: (e.sample / RATE) * 1000 });

describe('EnergyVad', () => {
  it('starts at the first of a run of voiced frames and ends at the end of the last voiced frame, after the hangover', () => {
    const pcm = Buffer.concat([tone(100, null), tone(500, -30), tone(600, null)]);
    expect(edges(pcm).map(ms)).toEqual([
      { kind: 'start', ms: 100 },
      { kind: 'end', ms: 600 },
    ]);
  });

  it('merges a gap shorter than the hangover, splits a longer one, and ignores a blip shorter than the onset run and a level under the threshold', () => {
    const gap = (g: number) => Buffer.concat([tone(300, -30), tone(g, null), tone(300, -30), tone(600, null)]);
    expect(edges(gap(ENERGY_VAD.hangover_ms - 10)).map(ms)).toEqual([
      { kind: 'start', ms: 0 },
      { kind: 'end', ms: 600 + ENERGY_VAD.hangover_ms - 10 },
    ]);
    expect(edges(gap(ENERGY_VAD.hangover_ms + 10)).filter((e) => e.kind === 'start')).toHaveLength(2);
    expect(edges(Buffer.concat([tone(20, -30), tone(500, null), tone(500, -50), tone(300, null)]))).toEqual([]);
  });

  it('does not depend on how the input is cut into appends', () => {
    const { pcm } = scriptedInput([{ say: 'q1' }, { silence_ms: 500 }, { say: 'stop' }, { silence_ms: 500 }], RATE);
    expect(edges(pcm, 2560)).toEqual(edges(pcm, 998));
  });

  it('hears each committed utterance as one: the within-utterance gaps (stop.wav: 210 ms) are under the hangover', () => {
    for (const rate of [16000, 24000]) {
      const { pcm, says } = scriptedInput([{ say: 'q1' }, { gap_ms: 400 }, { say: 'q2' }, { gap_ms: 400 }, { say: 'stop' }, { say: 'q3a' }, { gap_ms: 400 }, { say: 'q3b' }, { gap_ms: 400 }, { say: 'mhm' }, { silence_ms: 500 }], rate);
      const vad = new EnergyVad(rate);
      const found: VadEdge[] = [];
      vad.push(pcm, (e) => found.push(e));
      // stop.wav and q3a.wav back to back are still two: 330 ms of stop.wav's own tail between them.
      expect(found.filter((e) => e.kind === 'start').map((e) => Math.round((e.sample / rate) * 1000))).toEqual(says.map((s) => Math.round(s.onset_ms)));
      expect(found.filter((e) => e.kind === 'end').map((e) => Math.round((e.sample / rate) * 1000))).toEqual(says.map((s) => Math.round(s.offset_ms)));
    }
  });
});
