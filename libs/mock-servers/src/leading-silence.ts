/** The tone a response speaks after its leading silence: 440 Hz at -20 dBFS RMS, well above the probe's voiced level (-45 dBFS). */
const TONE_HZ = 440;
const TONE_DBFS = -20;

/**
 * Response audio that opens with `silence_ms` of digital silence and then speaks (a tone), in
 * output units: what `--leading-silence-ms` makes every model mock send, so a client's audible
 * TTFP can be told from its TTFP. Whole silent and whole voiced units are encoded once.
 */
export class LeadingSilence {
  private readonly unit_samples: number;
  private readonly silent: string;
  private readonly voiced: string;

  constructor(
    private readonly rate: number,
    unit_ms: number,
    readonly silence_ms: number,
  ) {
    this.unit_samples = Math.floor((rate * unit_ms) / 1000);
    this.silent = this.unit(this.unit_samples);
    this.voiced = this.unit(0);
  }

  /** Base64 of output unit `index` (from 0) of a response. */
  payload(index: number): string {
    const start = index * this.unit_samples;
    const voice_from = Math.round((this.rate * this.silence_ms) / 1000);
    if (start + this.unit_samples <= voice_from) return this.silent;
    if (start >= voice_from) return this.voiced;
    return this.unit(voice_from - start);
  }

  /** One unit whose first `silent_samples` are silence and the rest the tone. */
  private unit(silent_samples: number): string {
    const out = Buffer.alloc(this.unit_samples * 2);
    const amplitude = 32768 * 10 ** (TONE_DBFS / 20) * Math.SQRT2;
    for (let i = silent_samples; i < this.unit_samples; i++) out.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * TONE_HZ * i) / this.rate)), i * 2);
    return out.toString('base64');
  }
}
