import { pack, unpack } from 'msgpackr';
import { deviationMs } from '@duplex-bench/pacer';
import type { PacketTimes } from './pacing-recorder';

/** One session's packets in columns (seconds on the monotonic clock; send in ms). */
export interface SessionSampleColumns {
  id: string;
  seq: Int32Array;
  scheduled_s: Float64Array;
  start_s: Float64Array;
  completed_s: Float64Array;
  send_ms: Float64Array;
  /** Signed deviation of each packet from origin + seq × packet. */
  deviation_ms: Float64Array;
}

/** The raw samples of one process, as written to `samples.msgpack`. */
export interface SamplesFile {
  format: 'duplex-bench.samples';
  version: 1;
  packet_ms: number;
  sessions: SessionSampleColumns[];
}

class Column {
  size = 0;
  seq = new Int32Array(64);
  f = new Float64Array(64 * 4);

  push(p: PacketTimes): void {
    if (this.size === this.seq.length) {
      const seq = new Int32Array(this.seq.length * 2);
      seq.set(this.seq);
      const f = new Float64Array(this.f.length * 2);
      f.set(this.f);
      this.seq = seq;
      this.f = f;
    }
    const i = this.size++;
    this.seq[i] = p.seq;
    this.f[4 * i] = p.scheduled_s;
    this.f[4 * i + 1] = p.start_s;
    this.f[4 * i + 2] = p.completed_s;
    this.f[4 * i + 3] = p.send_ms;
  }
}

/** Every packet of every session of one process, kept in typed arrays (no object per packet). */
export class SampleStore {
  private readonly sessions = new Map<string, Column>();

  constructor(readonly packet_ms: number) {}

  open(session_id: string): { push(p: PacketTimes): void } {
    const column = new Column();
    this.sessions.set(session_id, column);
    return column;
  }

  /** Stream intervals [first send start, last send start] of every session that sent a packet. */
  streamIntervals(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (const c of this.sessions.values()) if (c.size > 0) out.push([c.f[1], c.f[4 * (c.size - 1) + 1]]);
    return out;
  }

  toFile(): SamplesFile {
    const sessions: SessionSampleColumns[] = [];
    for (const [id, c] of this.sessions) {
      const n = c.size;
      const pick = (k: number) => Float64Array.from({ length: n }, (_, i) => c.f[4 * i + k]);
      const start_s = pick(1);
      const seq = c.seq.slice(0, n);
      const origin_s = n > 0 ? start_s[0] : 0;
      sessions.push({
        id,
        seq,
        scheduled_s: pick(0),
        start_s,
        completed_s: pick(2),
        send_ms: pick(3),
        deviation_ms: Float64Array.from({ length: n }, (_, i) => deviationMs(start_s[i], origin_s, seq[i], this.packet_ms)),
      });
    }
    return { format: 'duplex-bench.samples', version: 1, packet_ms: this.packet_ms, sessions };
  }
}

export function encodeSamples(file: SamplesFile): Buffer {
  return pack(file);
}

export function decodeSamples(bytes: Buffer): SamplesFile {
  const file = unpack(bytes) as SamplesFile;
  if (file?.format !== 'duplex-bench.samples') throw new Error('not a duplex-bench samples file');
  return file;
}
