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

/** Float columns of a session's packets, in the order `SessionSampleColumns` lists them. */
type FloatColumn = 'scheduled_s' | 'start_s' | 'completed_s' | 'send_ms' | 'deviation_ms';

/**
 * A session's packets as they are sent, one typed array per figure, each packet's deviation from
 * packet 0 worked out as it comes: a part is handed over as copies of their first `size` entries.
 * (Interleaved in one array, they were taken apart by a loop per session as it ended: every
 * session of a run ends within a packet, and at 512 sessions that loop, cold, held the event loop
 * 40 ms of a 70 ms block.)
 */
class Column {
  size = 0;
  seq: Int32Array;
  cols: Record<FloatColumn, Float64Array>;
  /** Send start of the session's packet 0 (every part's deviations are from it); NaN before it. */
  origin_s = NaN;
  /** Parts of it that went to the spill. */
  parts = 0;

  /**
   * `end` hands the column to its store (which spills it or keeps it); `full`, when `first_part`
   * packets wait, then every SAMPLES_PART_PACKETS (the store may spill them).
   */
  constructor(
    private readonly packet_ms: number,
    private readonly ended: (column: Column) => void,
    private readonly full: (column: Column) => void,
    private part = SAMPLES_PART_PACKETS,
  ) {
    // Room for the first part at once (at most 45 KiB): sessions that start together grew their
    // columns at the same packet, and at 512 sessions that held the loop 27-84 ms at 256 packets.
    this.seq = new Int32Array(part);
    this.cols = floatColumns(part);
  }

  end(): void {
    this.ended(this);
  }

  push(p: PacketTimes): void {
    if (this.size === this.seq.length) this.grow();
    if (Number.isNaN(this.origin_s)) this.origin_s = p.start_s;
    const i = this.size++;
    const c = this.cols;
    this.seq[i] = p.seq;
    c.scheduled_s[i] = p.scheduled_s;
    c.start_s[i] = p.start_s;
    c.completed_s[i] = p.completed_s;
    c.send_ms[i] = p.send_ms;
    c.deviation_ms[i] = deviationMs(p.start_s, this.origin_s, p.seq, this.packet_ms);
    if (this.size === this.part) {
      this.part = SAMPLES_PART_PACKETS;
      this.full(this);
    }
  }

  /** The first `size` entries of each column: copied, or as views that the next packets write over. */
  taken(id: string, as: 'copy' | 'view' = 'copy'): SessionSampleColumns {
    const n = this.size;
    const c = this.cols;
    const cut = <T extends Int32Array | Float64Array>(a: T): T => (as === 'copy' ? a.slice(0, n) : a.subarray(0, n)) as T;
    return {
      id,
      seq: cut(this.seq),
      scheduled_s: cut(c.scheduled_s),
      start_s: cut(c.start_s),
      completed_s: cut(c.completed_s),
      send_ms: cut(c.send_ms),
      deviation_ms: cut(c.deviation_ms),
    };
  }

  /** To a whole part, then (a store that keeps every packet: no spill) to twice as many. */
  private grow(): void {
    const seq = new Int32Array(this.seq.length < SAMPLES_PART_PACKETS ? SAMPLES_PART_PACKETS : this.seq.length * 2);
    seq.set(this.seq);
    this.seq = seq;
    const cols = floatColumns(seq.length);
    for (const k of FLOAT_COLUMNS) cols[k].set(this.cols[k]);
    this.cols = cols;
  }
}

/** The float columns for `n` packets, as views of one array: one allocation, not five. */
function floatColumns(n: number): Record<FloatColumn, Float64Array> {
  const all = new Float64Array(n * FLOAT_COLUMNS.length);
  return Object.fromEntries(FLOAT_COLUMNS.map((k, i) => [k, all.subarray(i * n, (i + 1) * n)])) as Record<FloatColumn, Float64Array>;
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
      this.packet_ms,
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
    // Encoded from views: the bytes are copied into the value before the column takes more packets.
    (this.spill as (bytes: Uint8Array) => void)(encodeSessionColumns(c.taken(id, 'view')));
    c.size = 0;
    c.parts++;
    this.spilled++;
  }

  /**
   * One session's packets in columns (with `spillTo`: those since its last part), with each
   * packet's deviation from the session's packet 0; null for a session never opened.
   */
  sessionColumns(id: string): SessionSampleColumns | null {
    return this.sessions.get(id)?.taken(id) ?? null;
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

/**
 * One session part's columns as one msgpack value of a spilled samples file: `{session: {id, seq,
 * scheduled_s, …}}`, a map of maps with each column as bin (its raw little-endian bytes), written
 * in one pass into one buffer. `decodeSamples` reads it as it reads what msgpackr writes. Every
 * session of a run ends within a packet and spills then: msgpackr, cold, was about a quarter of the
 * 60 ms those spills held the loop at the end of a 512-session run (a `--cpu-prof`).
 */
export function encodeSessionColumns(s: SessionSampleColumns): Buffer {
  const id = Buffer.from(s.id, 'utf8');
  const columns: Array<[string, Buffer]> = [['seq', bytesOf(s.seq)], ...FLOAT_COLUMNS.map((k): [string, Buffer] => [k, bytesOf(s[k])])];
  let size = 1 + strHeadBytes(SESSION_KEY.length) + SESSION_KEY.length + 1 + strHeadBytes(2) + 2 + strHeadBytes(id.length) + id.length;
  for (const [key, bytes] of columns) size += strHeadBytes(key.length) + key.length + binHeadBytes(bytes.length) + bytes.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  const str = (text: Buffer | string): void => {
    const b = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
    at = writeHead(out, at, b.length, STR_HEADS);
    at += b.copy(out, at);
  };
  out[at++] = 0x81; // a map of one: session
  str(SESSION_KEY);
  out[at++] = 0x80 | (1 + columns.length); // id and the columns
  str('id');
  str(id);
  for (const [key, bytes] of columns) {
    str(key);
    at = writeHead(out, at, bytes.length, BIN_HEADS);
    at += bytes.copy(out, at);
  }
  return out;
}

const SESSION_KEY = 'session';

/** msgpack's str and bin heads by length (fixstr only for str): [bound, first byte, length bytes]. */
const STR_HEADS: Array<[number, number, number]> = [[32, 0xa0, 0], [256, 0xd9, 1], [65536, 0xda, 2], [2 ** 32, 0xdb, 4]];
const BIN_HEADS: Array<[number, number, number]> = [[256, 0xc4, 1], [65536, 0xc5, 2], [2 ** 32, 0xc6, 4]];

function writeHead(out: Buffer, at: number, n: number, heads: Array<[number, number, number]>): number {
  const [, first, width] = heads.find(([bound]) => n < bound) as [number, number, number];
  if (width === 0) {
    out[at] = first | n;
    return at + 1;
  }
  out[at] = first;
  out.writeUIntBE(n, at + 1, width);
  return at + 1 + width;
}

const headBytes = (n: number, heads: Array<[number, number, number]>): number => 1 + (heads.find(([bound]) => n < bound) as [number, number, number])[2];
const strHeadBytes = (n: number): number => headBytes(n, STR_HEADS);
const binHeadBytes = (n: number): number => headBytes(n, BIN_HEADS);

export function encodeSamples(file: SamplesFile): Buffer {
  return packr.pack({ ...file, sessions: file.sessions.map(rawColumns) });
}

/** A decoded map as an object, its maps too (a Buffer or typed array stays as it is). */
function objectOf(value: unknown): unknown {
  if (!(value instanceof Map)) return value;
  return Object.fromEntries([...value].map(([k, v]) => [k, objectOf(v)]));
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
  // A session part written by encodeSessionColumns is a plain msgpack map, which msgpackr (records on) reads as a Map.
  const values = (packr.unpackMultiple(bytes) as unknown[]).map(objectOf) as Array<{ session?: RawColumns } & Partial<Omit<SamplesFile, 'sessions'> & { sessions: RawColumns[] }>>;
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
