import type { VoiceActivitySettings } from './voice-activity';

/** Messages between VoiceThread and its worker: a tagged union. Times are seconds on the sessions' clock. */
export type ToVoiceWorker =
  | {
      kind: 'chunks';
      /** Every chunk's base64 text bytes, back to back from its start (the buffer may run past the last: `lengths` tell); transferred, not copied. */
      bytes: ArrayBuffer;
      /** Per chunk: its session, receipt time, rate and length in base64 bytes (0 for digital silence, sent without its bytes). */
      sessions: string[];
      received_s: Float64Array;
      rates: Int32Array;
      lengths: Int32Array;
      /** Per chunk: the PCM bytes of a chunk of digital silence, sent as this length only; 0 for a chunk whose bytes came. */
      silent_bytes: Int32Array;
    }
  | { kind: 'end'; session: string }
  | { kind: 'stop' };

export type FromVoiceWorker =
  | { kind: 'ready' }
  /** A session's model speech spans on the playout clock, once its audio ended; or why there are none. */
  | { kind: 'spans'; session: string; spans: Array<{ start_s: number; end_s: number }>; error?: string }
  | { kind: 'stopped' };

export interface VoiceWorkerOptions {
  settings: VoiceActivitySettings;
  /** Nice value of the thread (Linux), above the loop's: on a busy host the pacing loop wins the CPU. */
  nice: number;
}
