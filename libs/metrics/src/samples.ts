import type { BehaviourParts } from './behaviour';
import { Packr } from 'msgpackr';
import { deviationMs, staggeredFirst } from '@duplex-bench/pacer';
import { createUsHistogram, encodeHistogram, recordMs, type Histogram } from './histogram';
import type { PacketTimes, PacingRecorder } from './pacing-recorder';

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
  /** The process's histograms (µs), HDR compressed base64, so runs merge without re-recording. */
  histograms: {
    deviation: string;
    send: string;
    append_span: string;
    /** Native: unit lag (µs), when the server granted units. */
    unit_lag?: string;
    /** Receive delay (µs, server send stamp to client receive stamp), when the server stamped a frame. */
    receive_delay?: string;
  };
  sessions: SessionSampleColumns[];
  /** `--conversation`: the process's behaviour recorder, for merging. */
  behaviour?: BehaviourParts;
}

/**
 * A session's packets kept before they go to the spill as one part (`spillTo`): 1,024 packets, 82 s
 * at 80 ms, 36 KiB (a session's first part is shorter: `staggeredFirst`). A session that streams
 * for an hour holds at most this many, and its arrays are reused for the next part, never grown past it.
 */
export const SAMPLES_PART_PACKETS = 1024;

class Column {
  size = 0;
  seq = new Int32Array(64);
  f = new Float64Array(64 * 4);
  /** Send start of the session's packet 0 (every part's deviations are from it); NaN before it. */
  origin_s = NaN;
  /** Parts of it that went to the spill. */
  parts = 0;

  /**
   * `end` hands the column to its store (which spills it or keeps it); `full`, when `first_part`
   * packets wait, then every SAMPLES_PART_PACKETS (the store may spill them).
   */
  constructor(
    private readonly ended: (column: Column) => void,
    private readonly full: (column: Column) => void,
    private part = SAMPLES_PART_PACKETS,
  ) {}

  end(): void {
    this.ended(this);
  }

  push(p: PacketTimes): void {
    if (this.size === this.seq.length) {
      const seq = new Int32Array(this.seq.length * 2);
      seq.set(this.seq);
      const f = new Float64Array(this.f.length * 2);
      f.set(this.f);
      this.seq = seq;
      this.f = f;
    }
    if (Number.isNaN(this.origin_s)) this.origin_s = p.start_s;
    const i = this.size++;
    this.seq[i] = p.seq;
    this.f[4 * i] = p.scheduled_s;
    this.f[4 * i + 1] = p.start_s;
    this.f[4 * i + 2] = p.completed_s;
    this.f[4 * i + 3] = p.send_ms;
    if (this.size === this.part) {
      this.part = SAMPLES_PART_PACKETS;
      this.full(this);
    }
  }
}

/** Where one session's packets go as it sends them; `end` once it sent its last. */
export interface SampleColumn {
  push(p: PacketTimes): void;
  end(): void;
}

/**
 * Every packet of every session of one process, kept in typed arrays (no object per packet). With
 * `spillTo`, a session's columns leave memory as it goes: every SAMPLES_PART_PACKETS packets and
 * when it ends they are encoded (one msgpack value, `{session}`, a part of the session) and handed
 * to the spill, which appends them to samples.msgpack; the file's last value (`toFile`) holds the
 * histograms. A run of hours keeps only its sessions in flight, and of each at most one part.
 */
export class SampleStore {
  private readonly sessions = new Map<string, Column>();
  private spill: ((bytes: Uint8Array) => void) | null = null;
  /** Values (session parts) that went to the spill. */
  spilled = 0;

  constructor(readonly packet_ms: number) {}

  /** From now on, each session's columns are encoded and handed to `spill` a part at a time and when it ends. */
  spillTo(spill: (bytes: Uint8Array) => void): void {
    this.spill = spill;
  }

  open(session_id: string): SampleColumn {
    // Sessions that start together would fill their parts at the same tick: their first parts differ in length.
    const column = new Column(
      (ended) => {
        if (!this.spill || this.sessions.get(session_id) !== ended) return;
        // Its last part; a session that sent nothing is one empty value, as before parts.
        if (ended.size > 0 || ended.parts === 0) this.spillPart(session_id, ended);
        this.sessions.delete(session_id);
      },
      (full) => {
        if (this.spill && this.sessions.get(session_id) === full) this.spillPart(session_id, full);
      },
      staggeredFirst(this.opened++, SAMPLES_PART_PACKETS),
    );
    this.sessions.set(session_id, column);
    return column;
  }

  private opened = 0;

  private spillPart(id: string, c: Column): void {
    (this.spill as (bytes: Uint8Array) => void)(encodeSessionColumns(this.sessionColumns(id) as SessionSampleColumns));
    c.size = 0;
    c.parts++;
    this.spilled++;
  }

  /**
   * One session's packets in columns (with `spillTo`: those since its last part), with each
   * packet's deviation from the session's packet 0; null for a session never opened.
   */
  sessionColumns(id: string): SessionSampleColumns | null {
    const c = this.sessions.get(id);
    if (!c) return null;
    const n = c.size;
    const pick = (k: number) => Float64Array.from({ length: n }, (_, i) => c.f[4 * i + k]);
    const start_s = pick(1);
    const seq = c.seq.slice(0, n);
    const origin_s = Number.isNaN(c.origin_s) ? 0 : c.origin_s;
    return {
      id,
      seq,
      scheduled_s: pick(0),
      start_s,
      completed_s: pick(2),
      send_ms: pick(3),
      deviation_ms: Float64Array.from({ length: n }, (_, i) => deviationMs(start_s[i], origin_s, seq[i], this.packet_ms)),
    };
  }

  /** The file (or with `spillTo`, its last value): the histograms, and the sessions still in memory. */
  toFile(pacing: PacingRecorder, unitLag?: Histogram, behaviour?: BehaviourParts, receiveDelay?: Histogram): SamplesFile {
    const sessions = [...this.sessions.keys()].map((id) => this.sessionColumns(id) as SessionSampleColumns);
    const histograms: SamplesFile['histograms'] = {
      deviation: encodeHistogram(pacing.deviation),
      send: encodeHistogram(pacing.send),
      append_span: encodeHistogram(pacing.appendSpan),
      ...(unitLag ? { unit_lag: encodeHistogram(unitLag) } : {}),
      ...(receiveDelay && receiveDelay.totalCount > 0 ? { receive_delay: encodeHistogram(receiveDelay) } : {}),
    };
    return { format: 'duplex-bench.samples', version: 1, packet_ms: this.packet_ms, histograms, sessions, ...(behaviour ? { behaviour } : {}) };
  }
}

/**
 * A samples file of chosen sessions, its histograms built from their columns: what a recording
 * keeps per attempt, and pools over the attempts it reports.
 */
export function samplesFileOf(sessions: SessionSampleColumns[], packet_ms: number): SamplesFile {
  const deviation = createUsHistogram();
  const send = createUsHistogram();
  const appendSpan = createUsHistogram();
  for (const s of sessions) {
    for (let i = 0; i < s.seq.length; i++) {
      recordMs(deviation, Math.abs(s.deviation_ms[i]));
      recordMs(send, s.send_ms[i]);
      recordMs(appendSpan, Math.max(0, (s.completed_s[i] - s.scheduled_s[i]) * 1000));
    }
  }
  const histograms = { deviation: encodeHistogram(deviation), send: encodeHistogram(send), append_span: encodeHistogram(appendSpan) };
  return { format: 'duplex-bench.samples', version: 1, packet_ms, histograms, sessions };
}

const packr = /* @__PURE__ */ new Packr(); // pure: a bundle drops it (and msgpackr) where it is unused
const FLOAT_COLUMNS = ['scheduled_s', 'start_s', 'completed_s', 'send_ms', 'deviation_ms'] as const;

// Columns travel as raw little-endian bytes (msgpack bin) and are rebuilt as typed arrays on read:
// msgpackr's own typed-array support depends on which realm built the array, and failed under jest.
const bytesOf = (a: Int32Array | Float64Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

function floats(bytes: Uint8Array): Float64Array {
  const copy = new Uint8Array(bytes); // aligned copy
  return new Float64Array(copy.buffer, 0, copy.byteLength / 8);
}

function ints(bytes: Uint8Array): Int32Array {
  const copy = new Uint8Array(bytes);
  return new Int32Array(copy.buffer, 0, copy.byteLength / 4);
}

type RawColumns = Record<string, Uint8Array> & { id: string };

const rawColumns = (s: SessionSampleColumns): RawColumns =>
  ({ id: s.id, seq: bytesOf(s.seq), ...Object.fromEntries(FLOAT_COLUMNS.map((k) => [k, bytesOf(s[k])])) }) as unknown as RawColumns;

const typedColumns = (s: RawColumns): SessionSampleColumns => ({
  id: s.id,
  seq: ints(s.seq),
  scheduled_s: floats(s.scheduled_s),
  start_s: floats(s.start_s),
  completed_s: floats(s.completed_s),
  send_ms: floats(s.send_ms),
  deviation_ms: floats(s.deviation_ms),
});

/** One ended session's columns as one msgpack value of a spilled samples file. */
export function encodeSessionColumns(s: SessionSampleColumns): Buffer {
  return packr.pack({ session: rawColumns(s) });
}

export function encodeSamples(file: SamplesFile): Buffer {
  return packr.pack({ ...file, sessions: file.sessions.map(rawColumns) });
}

/** One session's parts, in order, as one session's columns. */
function joinParts(parts: SessionSampleColumns[]): SessionSampleColumns {
  if (parts.length === 1) return parts[0];
  const n = parts.reduce((sum, p) => sum + p.seq.length, 0);
  const join = <T extends Int32Array | Float64Array>(make: new (n: number) => T, pick: (p: SessionSampleColumns) => T): T => {
    const out = new make(n);
    let at = 0;
    for (const p of parts) {
      out.set(pick(p), at);
      at += p.seq.length;
    }
    return out;
  };
  return {
    id: parts[0].id,
    seq: join(Int32Array, (p) => p.seq),
    scheduled_s: join(Float64Array, (p) => p.scheduled_s),
    start_s: join(Float64Array, (p) => p.start_s),
    completed_s: join(Float64Array, (p) => p.completed_s),
    send_ms: join(Float64Array, (p) => p.send_ms),
    deviation_ms: join(Float64Array, (p) => p.deviation_ms),
  };
}

/**
 * A samples file: one value (version 1, and a run that did not spill), or the sessions spilled as
 * they went, one value per part (a session's parts in order, between other sessions' parts),
 * followed by the value with the histograms and any sessions left. Each session comes back whole,
 * in the order of its first part.
 */
export function decodeSamples(bytes: Buffer): SamplesFile {
  const values = packr.unpackMultiple(bytes) as Array<{ session?: RawColumns } & Partial<Omit<SamplesFile, 'sessions'> & { sessions: RawColumns[] }>>;
  const raw = values[values.length - 1];
  if (raw?.format !== 'duplex-bench.samples') throw new Error('not a duplex-bench samples file');
  const parts = new Map<string, SessionSampleColumns[]>();
  const add = (raw_columns: RawColumns) => {
    const columns = typedColumns(raw_columns);
    const of = parts.get(columns.id);
    if (of) of.push(columns);
    else parts.set(columns.id, [columns]);
  };
  for (const v of values.slice(0, -1)) {
    if (!v.session) throw new Error('not a duplex-bench samples file: a value before the last is not a session');
    add(v.session);
  }
  const { sessions, ...rest } = raw as Omit<SamplesFile, 'sessions'> & { sessions: RawColumns[] };
  sessions.forEach(add);
  return { ...rest, sessions: [...parts.values()].map(joinParts) };
}
