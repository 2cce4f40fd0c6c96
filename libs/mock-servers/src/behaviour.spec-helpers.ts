// Test helpers of behaviour mode: the committed speech at an input rate, scripted input, and the
// voiced spans of the audio a mock sent, as a client that plays on receipt hears them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWavAs, speechDir } from '@duplex-bench/audio';
import { VirtualTimeScheduler } from 'rxjs';
import { schedulerTimerHost, type TimerHost } from '@duplex-bench/pacer';
import { ArrivalOffsets } from './arrival-offsets';
import { BehaviourLog, type BehaviourEvent } from './behaviour-log';
import { voicedFrames } from './energy-vad';
import type { MockHost } from './openai-mock-session';

/** A committed utterance (libs/audio/speech/NAME.wav) at `rate`. */
export function speech(name: string, rate: number): Buffer {
  const file = join(speechDir(), `${name}.wav`);
  return parseWavAs(readFileSync(file), file, rate).pcm;
}

/**
 * A piece of the microphone's input: an utterance, silence, or `gap_ms`, silence that makes the gap
 * between the voiced samples of the utterances around it exactly that long.
 */
export type Piece = { say: string } | { silence_ms: number } | { gap_ms: number };

interface Said {
  name: string;
  onset_ms: number;
  offset_ms: number;
}

/**
 * The microphone's whole input at `rate`: utterances and silence in order, each utterance padded to
 * whole VAD frames (10 ms) so its voiced edges fall on frame boundaries; `says` holds each
 * utterance's voiced onset and offset, ms from the input's start.
 */
export function scriptedInput(pieces: Piece[], rate: number): { pcm: Buffer; says: Said[] } {
  const frame = Math.round(rate / 100);
  const utterance = (name: string) => {
    const pcm = speech(name, rate);
    const padded = Buffer.alloc(Math.ceil(pcm.length / 2 / frame) * frame * 2);
    pcm.copy(padded);
    const { voiced } = voicedFrames(padded, rate);
    return { pcm: padded, first: voiced.indexOf(true), last: voiced.lastIndexOf(true), frames: voiced.length };
  };
  const said = pieces.map((piece) => ('say' in piece ? utterance(piece.say) : null));
  const parts: Buffer[] = [];
  const says: Said[] = [];
  let at = 0;
  pieces.forEach((piece, i) => {
    let pcm: Buffer;
    const u = said[i];
    if ('say' in piece && u) {
      pcm = u.pcm;
      says.push({ name: piece.say, onset_ms: ((at + u.first * frame) / rate) * 1000, offset_ms: ((at + (u.last + 1) * frame) / rate) * 1000 });
    } else if ('gap_ms' in piece) {
      const before = said[i - 1];
      const after = said[i + 1];
      if (!before || !after) throw new Error('gap_ms goes between two utterances');
      const frames = piece.gap_ms / 10 - (before.frames - 1 - before.last) - after.first;
      if (frames < 0 || !Number.isInteger(frames)) throw new Error(`gap_ms ${piece.gap_ms} is shorter than the utterances' own silence or not whole frames`);
      pcm = Buffer.alloc(frames * frame * 2);
    } else pcm = Buffer.alloc(Math.round((rate * (piece as { silence_ms: number }).silence_ms) / 1000) * 2);
    parts.push(pcm);
    at += pcm.length / 2;
  });
  return { pcm: Buffer.concat(parts), says };
}

/** 80 ms appends of `pcm` (the last one short), as base64. */
export function packets(pcm: Buffer, rate: number, packet_ms = 80): string[] {
  const bytes = ((rate * packet_ms) / 1000) * 2;
  const out: string[] = [];
  for (let at = 0; at < pcm.length; at += bytes) out.push(pcm.subarray(at, Math.min(pcm.length, at + bytes)).toString('base64'));
  return out;
}

export interface SentFrame {
  t_ms: number;
  event: Record<string, unknown> & { type: string };
}

/** A host in virtual time that collects every frame sent and every behaviour log. */
export function virtualHost(): { scheduler: VirtualTimeScheduler; clock: TimerHost; host: MockHost; frames: SentFrame[]; logs: BehaviourLog[] } {
  const scheduler = new VirtualTimeScheduler();
  const clock = schedulerTimerHost(scheduler);
  const frames: SentFrame[] = [];
  const logs: BehaviourLog[] = [];
  const host: MockHost = {
    clock,
    send: (_ws, frame) => frames.push({ t_ms: scheduler.now(), event: JSON.parse(frame) }),
    arrivals: () => new ArrivalOffsets(),
    arrivalsDone: () => undefined,
    completed: () => undefined,
    behaviourLog: (id) => {
      const log = new BehaviourLog(id);
      logs.push(log);
      return log;
    },
  };
  return { scheduler, clock, host, frames, logs };
}

/** A socket that only takes what a session does to it. */
export const fakeSocket = { OPEN: 1, readyState: 1, close: () => undefined, terminate: () => undefined } as never;

/**
 * Voiced spans of the audio deltas in `frames` (types `types`), as a client that plays them on
 * receipt hears them: each plays from its receipt or when the one before it has played, whichever
 * is later. Spans closer than `merge_ms` are one (the probe merges model spans closer than 500 ms).
 */
export function playedSpans(frames: SentFrame[], rate: number, types: string[], merge_ms = 500): Array<{ start_ms: number; end_ms: number }> {
  const deltas = frames.filter((f) => types.includes(f.event.type));
  if (deltas.length === 0) return [];
  const t0 = deltas[0].t_ms;
  const pieces: Array<{ at: number; pcm: Buffer }> = [];
  let end = 0;
  for (const d of deltas) {
    const pcm = Buffer.from(String(d.event.delta), 'base64');
    const at = Math.max(Math.round(((d.t_ms - t0) * rate) / 1000), end);
    pieces.push({ at, pcm });
    end = at + pcm.length / 2;
  }
  const timeline = Buffer.alloc(end * 2);
  for (const p of pieces) p.pcm.copy(timeline, p.at * 2);
  const { frame_samples, voiced } = voicedFrames(timeline, rate);
  const spans: Array<{ start_ms: number; end_ms: number }> = [];
  voiced.forEach((v, i) => {
    if (!v) return;
    const start_ms = t0 + ((i * frame_samples) / rate) * 1000;
    const end_ms = t0 + (Math.min(end, (i + 1) * frame_samples) / rate) * 1000;
    const last = spans[spans.length - 1];
    if (last && start_ms - last.end_ms < merge_ms) last.end_ms = end_ms;
    else spans.push({ start_ms, end_ms });
  });
  return spans;
}

export const eventsOf = <K extends BehaviourEvent['kind']>(log: BehaviourLog, kind: K) => log.events.filter((e): e is Extract<BehaviourEvent, { kind: K }> => e.kind === kind);
