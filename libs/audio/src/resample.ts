/**
 * Band-limited sample-rate conversion: a Kaiser-windowed sinc, evaluated polyphase at the exact
 * rational ratio of the two rates (no drift over any length), streaming so that a worker can feed
 * received audio chunk by chunk. Output sample n sits at input time n × from / to, so the filter
 * adds no delay; past the end of the input it sees zeros.
 */

/** The filter's shape: its length in zero crossings each side, cutoff and window. */
export interface ResampleQuality {
  /** Zero crossings of the sinc on each side of the centre: the filter's length. */
  zero_crossings: number;
  /** Cutoff as a fraction of the lower of the two Nyquist frequencies. */
  rolloff: number;
  /** Kaiser window β: about 8.6 gives 86 dB of stopband, 6 gives 63 dB. */
  kaiser_beta: number;
}

/** For files loaded once (WAV input): 32 zero crossings, cut off at 0.9 of the new Nyquist, about 86 dB down. */
export const FILE_QUALITY: ResampleQuality = { zero_crossings: 32, rolloff: 0.9, kaiser_beta: 8.6 };

/**
 * For the voice activity detector where linear interpolation would fold into the 0-4 kHz it reads
 * (inputs above 24 kHz), or where its settings ask for `resampler: 'sinc'`: 2 zero crossings, 14
 * taps from 22,050 to 8,000 Hz (its default before the linear front end). Tones at 6 and 10 kHz
 * taken from 22,050 to 8,000 Hz stay 34 and 62 dB down (resample.spec.ts). Against 3 zero
 * crossings (20 taps) the VAD finds the same spans of the committed speech at 16 to 48 kHz (within
 * 9 ms of their bounds) and calls the same tones and noise speech or not; its thread took 0.65× the
 * CPU in a 512-session conversation run (docs/performance.md, "Conversations: what the VAD costs").
 */
export const VAD_QUALITY: ResampleQuality = { zero_crossings: 2, rolloff: 0.9, kaiser_beta: 5 };

/** A phase table is kept when the ratio has at most this many phases (22,050 → 24,000 has 480). */
const MAX_TABLE_PHASES = 4096;

/**
 * Phase tables by ratio and quality, shared by every Resampler of the same conversion: a run's
 * hundreds of sessions at one rate read one table, not one each. Few conversions occur in a
 * process; past MAX_SHARED_TABLES a converter keeps a table of its own.
 */
const SHARED_TABLES = new Map<string, { table: Float64Array; ready: Uint8Array }>();
const MAX_SHARED_TABLES = 32;

function shareTable(key: string, size: number, phases: number): { table: Float64Array; ready: Uint8Array } {
  const made = { table: new Float64Array(size), ready: new Uint8Array(phases) };
  if (SHARED_TABLES.size < MAX_SHARED_TABLES) SHARED_TABLES.set(key, made);
  return made;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (its series converges fast for β ≤ 20). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

/**
 * Σ h[first + k] × taps[off + k] for k < n, in four running sums: one sum waits on each add before the
 * next, four let the adds overlap (about a third less time a tap in a throwaway loop here; the
 * detector's whole cost is tools/bench/vad.ts's).
 */
function dot(h: Float32Array, first: number, taps: Float64Array, off: number, n: number): number {
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  let a3 = 0;
  let k = 0;
  for (; k + 3 < n; k += 4) {
    const j = first + k;
    const t = off + k;
    a0 += h[j] * taps[t];
    a1 += h[j + 1] * taps[t + 1];
    a2 += h[j + 2] * taps[t + 2];
    a3 += h[j + 3] * taps[t + 3];
  }
  for (; k < n; k++) a0 += h[first + k] * taps[off + k];
  return a0 + a1 + (a2 + a3);
}

/** Converts a stream of samples (floats, any scale) from one rate to another. */
export class Resampler {
  private readonly up: number;
  private readonly down: number;
  private readonly cutoff: number;
  private readonly half_width: number;
  /** Taps each side of the centre: inputs i0 - (reach - 1) … i0 + reach weigh in output n. */
  private readonly reach: number;
  private readonly beta: number;
  /** Taps per output: 2 × reach. */
  private readonly n_taps: number;
  /** Every phase's taps, phase p at p × n_taps, filled as phases are first met; one phase's when there are too many. */
  private readonly table: Float64Array;
  /** Which phases of `table` are filled (empty when it holds one phase). */
  private readonly ready: Uint8Array;
  private history = new Float32Array(0);
  /** Absolute index of history[0] in the input. */
  private base = 0;
  private received = 0;
  private produced = 0;

  constructor(
    readonly from_rate: number,
    readonly to_rate: number,
    quality: ResampleQuality = FILE_QUALITY,
  ) {
    if (!(Number.isInteger(from_rate) && from_rate > 0 && Number.isInteger(to_rate) && to_rate > 0)) {
      throw new RangeError(`cannot resample ${from_rate} Hz to ${to_rate} Hz: rates are positive whole numbers`);
    }
    const g = gcd(from_rate, to_rate);
    this.up = to_rate / g;
    this.down = from_rate / g;
    this.cutoff = quality.rolloff * Math.min(1, to_rate / from_rate);
    this.half_width = quality.zero_crossings / this.cutoff;
    this.reach = Math.ceil(this.half_width);
    this.beta = quality.kaiser_beta;
    this.n_taps = 2 * this.reach;
    const phases = this.up <= MAX_TABLE_PHASES ? this.up : 0;
    const key = `${this.up}/${this.down}/${quality.zero_crossings}/${quality.rolloff}/${quality.kaiser_beta}`;
    const shared = phases > 0 ? (SHARED_TABLES.get(key) ?? shareTable(key, phases * this.n_taps, phases)) : undefined;
    this.table = shared?.table ?? new Float64Array(this.n_taps);
    this.ready = shared?.ready ?? new Uint8Array(0);
  }

  /** Output samples for `from_count` input samples, as the whole conversion gives them. */
  static outputLength(from_count: number, from_rate: number, to_rate: number): number {
    return Math.round((from_count * to_rate) / from_rate);
  }

  /** Takes the next input samples; returns the output they complete. */
  push(input: Float32Array): Float32Array {
    const kept = this.history.subarray(Math.max(0, this.firstNeeded() - this.base));
    const next = new Float32Array(kept.length + input.length);
    next.set(kept);
    next.set(input, kept.length);
    this.base = this.received - kept.length;
    this.history = next;
    this.received += input.length;
    return this.produce(Number.POSITIVE_INFINITY);
  }

  /** The rest of the output, the input taken as ended: round(input × to / from) samples in all. */
  end(): Float32Array {
    return this.produce(Resampler.outputLength(this.received, this.from_rate, this.to_rate));
  }

  private firstNeeded(): number {
    return Math.floor((this.produced * this.down) / this.up) - (this.reach - 1);
  }

  /** The next outputs: up to `limit` in all when ended, else those the input received so far reaches. */
  private produce(limit: number): Float32Array {
    let last = limit;
    if (!Number.isFinite(limit)) {
      // Output n needs input floor(n × down / up) + reach, so n < (received - reach) × up / down.
      const reached = this.received - this.reach;
      last = reached > 0 ? Math.floor((reached * this.up + this.down - 1) / this.down) : 0;
    }
    const out = new Float32Array(Math.max(0, last - this.produced));
    const h = this.history;
    const n_taps = this.n_taps;
    const table = this.table;
    const ready = this.ready;
    const cached = ready.length > 0;
    // Output n reads from input floor(n × down / up) at phase (n × down) mod up; both step by a fixed
    // amount per output, so neither is divided out again.
    const pos = this.produced * this.down;
    let i0 = Math.floor(pos / this.up);
    let phase = pos - i0 * this.up;
    const step_i = Math.floor(this.down / this.up);
    const step_phase = this.down - step_i * this.up;
    for (let o = 0; o < out.length; o++) {
      const off = cached ? phase * n_taps : 0;
      if (!cached || ready[phase] === 0) this.fill(phase, off);
      const first = i0 - (this.reach - 1) - this.base;
      if (first >= 0 && first + n_taps <= h.length) {
        out[o] = dot(h, first, table, off, n_taps);
      } else {
        // Near the start and past the end of the input, missing samples are zeros.
        let acc = 0;
        for (let k = 0; k < n_taps; k++) {
          const j = first + k;
          if (j >= 0 && j < h.length) acc += h[j] * table[off + k];
        }
        out[o] = acc;
      }
      i0 += step_i;
      phase += step_phase;
      if (phase >= this.up) {
        phase -= this.up;
        i0 += 1;
      }
    }
    this.produced += out.length;
    return out;
  }

  /** Writes at `off` the 2 × reach taps for inputs i0 - (reach - 1) … i0 + reach at `phase` / up past i0, summing to 1. */
  private fill(phase: number, off: number): void {
    const frac = phase / this.up;
    const taps = this.table;
    let sum = 0;
    for (let k = 0; k < this.n_taps; k++) {
      const x = k - (this.reach - 1) - frac;
      const t = x / this.half_width;
      taps[off + k] = 0;
      if (Math.abs(t) >= 1) continue;
      const u = this.cutoff * x;
      const sinc = u === 0 ? 1 : Math.sin(Math.PI * u) / (Math.PI * u);
      taps[off + k] = sinc * (besselI0(this.beta * Math.sqrt(1 - t * t)) / besselI0(this.beta));
      sum += taps[off + k];
    }
    // Unit gain at DC for every phase: no ripple at the output rate from one phase to the next.
    for (let k = 0; k < this.n_taps; k++) taps[off + k] /= sum;
    if (this.ready.length > 0) this.ready[phase] = 1;
  }
}

/** Floats in [-1, 1) to PCM16 LE, rounded and clipped. */
export function floatToPcm16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768))), i * 2);
  }
  return out;
}

/** PCM16 LE to floats in [-1, 1). */
export function pcm16ToFloat(pcm16: Buffer): Float32Array {
  const out = new Float32Array(pcm16.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = pcm16.readInt16LE(i * 2) / 32768;
  return out;
}

/** All of `samples` from `from_rate` to `to_rate`: round(length × to / from) samples. */
export function resampleAll(samples: Float32Array, from_rate: number, to_rate: number, quality: ResampleQuality = FILE_QUALITY): Float32Array {
  const r = new Resampler(from_rate, to_rate, quality);
  const head = r.push(samples);
  const tail = r.end();
  const all = new Float32Array(head.length + tail.length);
  all.set(head);
  all.set(tail, head.length);
  return all;
}

/** PCM16 LE mono from `from_rate` to `to_rate`, band-limited (FILE_QUALITY unless told). */
export function resamplePcm16(pcm16: Buffer, from_rate: number, to_rate: number, quality: ResampleQuality = FILE_QUALITY): Buffer {
  if (from_rate === to_rate) return Buffer.from(pcm16.subarray(0, pcm16.length - (pcm16.length % 2)));
  return floatToPcm16(resampleAll(pcm16ToFloat(pcm16), from_rate, to_rate, quality));
}

/**
 * Linear interpolation of PCM16 at the exact rational ratio of two rates, streaming, for the voice
 * activity detector only: no filter, and integer work an output. It does not band-limit. From
 * 22,050 or 24,000 Hz to 16 kHz, input above 8 kHz folds to 16,000 - f (4-8 kHz), above the 0-4 kHz
 * that libfvad reads (its own half-band split takes 16 kHz to 8); the interpolation's images of
 * 2-10 kHz input fold into 0-4 kHz, 5 to 20 dB down (the triangle's sinc² response). Speech has
 * little there: the VAD finds the same spans of the committed speech as through the windowed sinc
 * (voice-activity.spec.ts), at 0.42-0.47x of its CPU at 22.05-24 kHz (tools/bench/vad.ts). Output
 * n sits at input time n × from / to and needs the input after it, so a stream's last output is
 * not given.
 *
 * The outputs repeat their pattern every `up` outputs (`down` inputs): one table gives each output
 * of a period its left neighbour and its weight in 1/32,768 (a weight within 1/65,536 of exact, so an
 * output within one step of the exact interpolation). Integer work only: 2x as fast as the same
 * loop in floats, which was 2.6x as fast as with Math.round (15.5, 6.0 and 3 ns an output at 22,050
 * Hz, interleaved, throwaway loops).
 */
export class LinearResampler {
  private readonly up: number;
  private readonly down: number;
  /** Per output of a period: its left neighbour's input index from the period's start, and the right one's weight. */
  private readonly offset: Int32Array;
  private readonly weight: Int32Array;
  /** Outputs given, and the place in its period of the next. */
  private produced = 0;
  private phase_k = 0;
  /** Input index (absolute) where the next output's period starts. */
  private period_start = 0;
  private received = 0;
  /** The input sample at received - 1. */
  private last = 0;
  private out = new Int16Array(0);

  constructor(
    readonly from_rate: number,
    readonly to_rate: number,
  ) {
    if (!(Number.isInteger(from_rate) && from_rate > 0 && Number.isInteger(to_rate) && to_rate > 0)) {
      throw new RangeError(`cannot resample ${from_rate} Hz to ${to_rate} Hz: rates are positive whole numbers`);
    }
    const g = gcd(from_rate, to_rate);
    this.up = to_rate / g;
    this.down = from_rate / g;
    if (this.up > MAX_TABLE_PHASES) throw new RangeError(`cannot interpolate ${from_rate} Hz to ${to_rate} Hz: ${this.up} phases`);
    this.offset = new Int32Array(this.up);
    this.weight = new Int32Array(this.up);
    for (let k = 0; k < this.up; k++) {
      this.offset[k] = Math.floor((k * this.down) / this.up);
      this.weight[k] = Math.round((((k * this.down) % this.up) / this.up) * 32768);
    }
  }

  /** Takes the next input samples; returns the outputs they complete, in a view that the next push overwrites. */
  push(input: Int16Array): Int16Array {
    const base = this.received;
    this.received += input.length;
    // Output n reads input floor(n × down / up) and the one after: n is complete while n × down / up < received - 1.
    const complete = Math.max(this.produced, Math.ceil(((this.received - 1) * this.up) / this.down));
    const count = complete - this.produced;
    if (this.out.length < count) this.out = new Int16Array(count * 2);
    const out = this.out;
    const { up, down, offset, weight } = this;
    let k = 0;
    let pk = this.phase_k;
    let start = this.period_start - base;
    // Only the first output can read the push before's last sample (its left neighbour at base - 1).
    if (count > 0 && start + offset[pk] < 0) {
      const a = this.last;
      out[k++] = a + (((input[0] - a) * weight[pk] + 16384) >> 15);
      if (++pk === up) {
        pk = 0;
        start += down;
      }
    }
    while (k < count) {
      const end = Math.min(count, k + (up - pk));
      for (; k < end; k++, pk++) {
        const j = start + offset[pk];
        const a = input[j];
        out[k] = a + (((input[j + 1] - a) * weight[pk] + 16384) >> 15);
      }
      if (pk === up) {
        pk = 0;
        start += down;
      }
    }
    this.produced = complete;
    this.phase_k = pk;
    this.period_start = start + base;
    if (input.length > 0) this.last = input[input.length - 1];
    return out.subarray(0, count);
  }
}

/**
 * Whether the VAD takes `from_rate` to `to_rate` by linear interpolation: where what folds straight
 * down (input above to_rate / 2) lands above the 4 kHz libfvad reads, so at to_rate - from_rate / 2
 * or higher. To 16 kHz, inputs up to 24,000 Hz; 44,100 or 48,000 Hz would fold at full strength.
 */
export function linearKeepsVadBand(from_rate: number, to_rate: number): boolean {
  return from_rate <= to_rate || to_rate - from_rate / 2 >= 4000;
}
