import type { PlayedStep, ResponseEndEvidence, SpeechSpan } from './behaviour';

/** A step of the script as it played, ms from the session's first packet. */
export interface SpeechStep {
  pass: number;
  step: number;
  kind: PlayedStep['kind'];
  expect?: PlayedStep['expect'];
  start_ms: number;
  /** Null when the session ended in it before its end was decided. */
  end_ms: number | null;
  /** say: the utterance's first and last speech-level sample (the user times of turns.jsonl). */
  speech_start_ms?: number;
  speech_end_ms?: number;
  ended_by?: PlayedStep['ended_by'];
  cut?: boolean;
}

/** What the dialect said of a response, as received. */
export interface ResponseMark {
  t_ms: number;
  event: 'created' | 'done';
  /** done: how it ended, when the dialect said (`listen`: vLLM-Omni's response.listen). */
  status?: string;
}

/**
 * One conversation session as it played, for its timeline: a line of speech.jsonl. Spans and
 * times only (no audio), ms from the session's first packet, the clock of turns.jsonl.
 */
export interface SessionSpeech {
  session: string;
  /** Where the model speech spans come from: the VAD, or the live energy estimate when it failed. */
  model_speech: 'vad' | 'energy';
  steps: SpeechStep[];
  /** The model speech spans the behaviour figures read, [start_ms, end_ms]. */
  model: Array<[number, number]>;
  events: ResponseMark[];
}

/** A session's speech record from what it played, the model's spans and the dialect's response starts and ends. */
export function sessionSpeech(
  session: string,
  steps: PlayedStep[],
  spans: SpeechSpan[],
  responses: { starts: Array<{ t_s: number }>; ends: ResponseEndEvidence[] },
  origin_s: number,
  model_speech: SessionSpeech['model_speech'],
): SessionSpeech {
  const ms = (t_s: number) => Math.round((t_s - origin_s) * 1e6) / 1000;
  const events: ResponseMark[] = [
    ...responses.starts.map((s): ResponseMark => ({ t_ms: ms(s.t_s), event: 'created' })),
    ...responses.ends.map((e): ResponseMark => (e.status === undefined ? { t_ms: ms(e.t_s), event: 'done' } : { t_ms: ms(e.t_s), event: 'done', status: e.status })),
  ].sort((a, b) => a.t_ms - b.t_ms);
  return {
    session,
    model_speech,
    steps: steps.map((s) => {
      const out: SpeechStep = { pass: s.pass, step: s.step, kind: s.kind, start_ms: ms(s.start_s), end_ms: s.end_s === null ? null : ms(s.end_s) };
      if (s.expect) out.expect = s.expect;
      if (s.speech_start_s !== undefined) out.speech_start_ms = ms(s.speech_start_s);
      if (s.speech_end_s !== undefined) out.speech_end_ms = ms(s.speech_end_s);
      if (s.ended_by) out.ended_by = s.ended_by;
      if (s.cut) out.cut = true;
      return out;
    }),
    model: spans.map((s) => [ms(s.start_s), ms(s.end_s)]),
    events,
  };
}
