import type { ConversationScript } from '@duplex-bench/audio';
import type { TimerHost } from '@duplex-bench/pacer';
import type { AnswerAudio } from './answer-audio';
import { clockMs, type BehaviourEvent, type BehaviourLog } from './behaviour-log';
import { EnergyVad } from './energy-vad';

/** The behaviour knobs of the model mocks (`serve --respond-after-ms …`). */
export interface BehaviourOptions {
  /** Silence after the user's speech ends before the model answers, ms. */
  respond_after_ms: number;
  /** How long an answer speaks, ms. */
  answer_ms: number;
  /** How long the model goes on speaking once the user speaks over it (a barge-in), ms. */
  stop_after_ms: number;
  /** The model takes the turn in a pause longer than this, ms; 0: never. */
  takeover_after_ms: number;
  /** A backchannel during an answer makes the model stop (after `stop_after_ms`); else it keeps talking. */
  yield_on_backchannel: boolean;
}

export const BEHAVIOUR_DEFAULTS: BehaviourOptions = { respond_after_ms: 500, answer_ms: 3000, stop_after_ms: 200, takeover_after_ms: 0, yield_on_backchannel: false };

/** The knobs resolved for a server: its answer audio, its script, its load. */
export interface BehaviourSettings extends BehaviourOptions {
  /** The conversation the probe follows, when given: the mock plays the other side of it. */
  script: ConversationScript | null;
  /** The answer at the dialect's output rate. */
  answer: AnswerAudio;
  /** Active sessions over `capacity_sessions` (1 without it): respond and stop times grow by max(1, load). */
  load: () => number;
}

export type StopCause = 'barge_in' | 'backchannel_yield' | 'client_cancel';

/** Where a turn-based dialect's answers go: a response opens, carries the answer audio, and ends. */
export interface AnswerSink {
  start(answer: number): void;
  /** One output unit of answer audio (shorter at the end or at a stop). */
  audio(answer: number, pcm: Buffer): void;
  /** The answer is over: its audio was all sent (`completed`), or it stopped (`cancelled`, with its cause). */
  end(answer: number, how: 'completed' | 'cancelled', cause?: StopCause): void;
  /** Whether a response may open now (vllm-omni: the last one's playback acknowledged); when not, the dialect calls `ready()` once it may. */
  canStart?(): boolean;
  /** The user's speech as heard (the dialect's VAD events), at its position in the input, ms. */
  speech?(edge: 'start' | 'end', input_ms: number): void;
}

/** What the silence after an utterance is, by the script. */
type SilenceMeans = 'turn_end' | 'pause';

interface Utterance {
  index: number;
  step?: number;
  /** Heard during an answer: it made the answer stop, or it was a backchannel. */
  during: 'barge_in' | 'backchannel' | null;
}

/** An answer decided on and not yet begun. */
interface Plan {
  why: 'turn_end' | 'takeover' | 'client_request';
  /** When its first voiced sample is due; its audio begins the answer's onset before. */
  due_s: number;
  begin_s: number;
  step?: number;
  cancelTimer: (() => void) | null;
}

interface Answer {
  n: number;
  why: Plan['why'];
  due_s: number;
  step?: number;
  /** Samples out so far. */
  sent: number;
  /** Where its audio ends: the whole answer, or the cut of a stop. */
  cut: number;
  /** Playout time of the next sample to go out. */
  next_s: number;
  /** Playout time of the last voiced sample out so far, and whether the onset went out. */
  voiced_end_s: number;
  voiced: boolean;
  stopping: StopCause | null;
  cancelTimer: (() => void) | null;
}

const ARRIVALS_KEPT = 64;
/** Answers kept for what a client says it heard of them (a late ack names the one before the last). */
const RECENT_KEPT = 4;

/**
 * One session's behaviour: it hears the user by energy (EnergyVad on the decoded input), decides
 * when to answer and when to stop, and logs what it did.
 *
 * **Rules.** A mock cannot know whether a silence ends the user's turn or is a pause inside it (a
 * real model decides from meaning), so with a script it plays the other side of it: it counts the
 * user's utterances as it hears them, and the step that follows each utterance's `say` says what
 * the silence after it is:
 * - `listen` (or the end of the script): the end of the turn; the model answers `respond_after_ms`
 *   after the last voiced sample;
 * - `silence_ms` (with `expect: hold` or none) or another `say`: a pause; the model takes the turn
 *   only when the pause lasts longer than `takeover_after_ms` (when above 0);
 * - an utterance heard during an answer is a barge-in, and the answer goes silent `stop_after_ms`
 *   after its onset — unless its step says `expect: continue`: a backchannel, talked over, or
 *   yielded to (stopping the same way) with `yield_on_backchannel`; a backchannel's end hands no
 *   turn over.
 * Without a script every silence of `respond_after_ms` after speech ends the turn, and any speech
 * during an answer is a barge-in. Speech that starts before a planned answer began drops it (the
 * user went on). With `capacity_sessions` the respond and stop times grow by max(1, active/N);
 * takeover times do not.
 *
 * **States.** The user side is the VAD's: silent or speaking (`current`). The model side: idle, an
 * answer planned (`plan`), an answer out (`answer`), or an answer stopping (`answer.stopping`); a
 * plan made while an answer stops begins once it has.
 *
 * **Output.** Native full-duplex profiles pull one output unit at a time (`pullUnit`: speech or
 * silence, as it plays); turn-based dialects are paced here, one unit of answer audio every unit
 * from its start, on deadlines from that start, into an AnswerSink. Either way a unit plays from
 * when it goes out or when the one before it has played, whichever is later, and the log's answer
 * times are those playout times.
 */
export class BehaviourSession {
  private readonly vad: EnergyVad;
  private readonly says: number[];
  private samples_in = 0;
  private readonly arrivals: Array<{ start: number; arrived_s: number }> = [];
  private utterances = 0;
  private current: Utterance | null = null;
  private plan: Plan | null = null;
  private answer: Answer | null = null;
  private answers = 0;
  private playout_s = 0;
  private closed = false;
  /** Turn-based: a stopped answer whose response ends when its audio has played. */
  private ending: Answer | null = null;
  private endTimer: (() => void) | null = null;
  /** The last answers begun, newest last: what the client says it heard of one is checked against them. */
  private readonly recent: Answer[] = [];
  /**
   * The model stops an answer on its own when the user speaks over it (openai: the session's
   * `interrupt_response`, true unless the client asks otherwise). When false, an answer spoken over
   * goes on until the client cancels it.
   */
  interrupts = true;

  constructor(
    private readonly settings: BehaviourSettings,
    private readonly input_rate: number,
    private readonly clock: TimerHost,
    private readonly log: BehaviourLog,
    /** Turn-based dialects: the sink and the output unit; native: null (units are pulled). */
    private readonly paced: { sink: AnswerSink; unit_ms: number } | null,
  ) {
    this.vad = new EnergyVad(input_rate);
    this.says = settings.script ? settings.script.steps.flatMap((s, i) => (s.kind === 'say' ? [i] : [])) : [];
  }

  /** The answer whose response is open (turn-based: from its start until its end went out), or null. */
  get openAnswer(): number | null {
    return this.answer?.n ?? this.ending?.n ?? null;
  }

  /** Appended input PCM16 at the input rate, as it arrived. */
  onInput(pcm: Buffer, arrived_s: number): void {
    if (this.closed) return;
    this.arrivals.push({ start: this.samples_in, arrived_s });
    if (this.arrivals.length > ARRIVALS_KEPT) this.arrivals.shift();
    this.samples_in += pcm.length >> 1;
    this.vad.push(pcm, (edge) => (edge.kind === 'start' ? this.onSpeechStart(edge.sample) : this.onSpeechEnd(edge.sample)));
  }

  /**
   * Native: the payload of the output unit going out now, `samples` long at the output rate: the
   * answer where one plays, else null (silence).
   */
  pullUnit(samples: number): Buffer | null {
    if (this.closed) return null;
    const now = this.clock.now_s();
    const rate = this.settings.answer.rate;
    const p = Math.max(now, this.playout_s);
    this.playout_s = p + samples / rate;
    const plan = this.plan;
    if (!this.answer && plan && plan.begin_s < this.playout_s) this.begin(Math.max(plan.begin_s, p));
    const a = this.answer;
    if (!a) return null;
    const offset = Math.max(0, Math.min(samples, Math.round((a.next_s - p) * rate)));
    const out = Buffer.alloc(samples * 2);
    this.emit(a, p + offset / rate, samples - offset, out, offset);
    return out;
  }

  /** openai `response.create`: an answer now, unless one is out. */
  respondNow(): void {
    if (this.closed || this.answer || this.ending) return;
    this.dropPlan();
    const now = this.clock.now_s();
    this.plan = { why: 'client_request', due_s: now + this.settings.answer.onset_sample / this.settings.answer.rate, begin_s: now, cancelTimer: null };
    this.begin(now);
  }

  /** openai `response.cancel`: the answer out stops now. Returns false when none is out. */
  cancel(): boolean {
    const a = this.answer;
    if (this.closed || !a) return false;
    a.stopping = 'client_cancel';
    a.cut = a.sent;
    a.cancelTimer?.();
    this.finish(a);
    return true;
  }

  /** openai `conversation.item.truncate` of answer `n`'s item: logged with what had played of it by now. */
  truncated(n: number, audio_end_ms: number): void {
    this.add({ kind: 'truncate', t_ms: clockMs(this.clock.now_s()), answer: n, audio_end_ms, heard_ms: this.heardMs(n) });
  }

  /** vllm-omni `playback.ack` of answer `n`'s response: logged with what had played of it by now. */
  acked(n: number, played_ms: number): void {
    this.add({ kind: 'playback_ack', t_ms: clockMs(this.clock.now_s()), answer: n, played_ms, heard_ms: this.heardMs(n) });
  }

  /**
   * Answer `n`'s audio played by now, ms: what went out, less what still waits to play. What is
   * queued plays back to back up to `next_s` (each unit from its send or the end of the one before),
   * so what waits is `next_s - now`. Null for an answer no longer known.
   */
  private heardMs(n: number): number | null {
    const a = this.recent.find((r) => r.n === n);
    if (!a) return null;
    const rate = this.settings.answer.rate;
    const waiting = Math.max(0, (a.next_s - this.clock.now_s()) * rate);
    return clockMs(Math.max(0, a.sent - waiting) / rate);
  }

  /** The session ended: timers off; an answer out ends where its audio went. */
  close(): void {
    if (this.closed) return;
    this.dropPlan();
    this.endTimer?.();
    this.endTimer = null;
    const a = this.answer;
    if (a) {
      a.cancelTimer?.();
      this.answer = null;
      this.add({ kind: 'answer_end', t_ms: clockMs(a.voiced ? a.voiced_end_s : a.next_s), answer: a.n, silent_ms: clockMs(a.next_s), why: 'session_end' });
    }
    this.closed = true;
  }

  private add(event: BehaviourEvent): void {
    this.log.add(event);
  }

  private factor(): number {
    return Math.max(1, this.settings.load());
  }

  /** When input sample `sample` arrived: its append's arrival plus its offset in the append. An end lies in the append before one that starts there. */
  private clockOf(sample: number, end: boolean): number {
    for (let i = this.arrivals.length - 1; i >= 0; i--) {
      const a = this.arrivals[i];
      if (a.start < sample || (!end && a.start === sample) || i === 0) return a.arrived_s + (sample - a.start) / this.input_rate;
    }
    return this.clock.now_s();
  }

  private stepOf(utterance: number): number | undefined {
    return this.settings.script ? this.says[utterance] : undefined;
  }

  /** What the silence after utterance `u` is, by the step that follows its `say`. */
  private silenceAfter(u: number): { means: SilenceMeans; step?: number } {
    const script = this.settings.script;
    const say = this.stepOf(u);
    if (!script || say === undefined) return { means: 'turn_end' };
    const next = script.steps[say + 1];
    if (!next) return { means: 'turn_end' };
    if (next.kind === 'listen') return { means: 'turn_end', step: say + 1 };
    return next.kind === 'silence' ? { means: 'pause', step: say + 1 } : { means: 'pause' };
  }

  private onSpeechStart(sample: number): void {
    const t = this.clockOf(sample, false);
    const index = this.utterances++;
    const step = this.stepOf(index);
    const at = step === undefined ? {} : { step };
    const input_ms = (sample / this.input_rate) * 1000;
    this.add({ kind: 'speech_start', t_ms: clockMs(t), input_ms, utterance: index, ...at });
    this.paced?.sink.speech?.('start', input_ms);
    this.dropPlan();
    let during: Utterance['during'] = null;
    const a = this.answer;
    if (a && !a.stopping) {
      const stop_at = t + (this.settings.stop_after_ms * this.factor()) / 1000;
      const backchannel = step !== undefined && this.settings.script?.steps[step].kind === 'say' && (this.settings.script.steps[step] as { expect?: string }).expect === 'continue';
      if (backchannel) {
        during = 'backchannel';
        const yields = this.settings.yield_on_backchannel;
        this.add({ kind: 'backchannel', t_ms: clockMs(t), answer: a.n, yields, ...(yields ? { stop_at_ms: clockMs(stop_at) } : {}), ...at });
        if (yields) this.stop(a, stop_at, 'backchannel_yield');
      } else if (this.interrupts) {
        during = 'barge_in';
        this.add({ kind: 'barge_in', t_ms: clockMs(t), answer: a.n, stop_at_ms: clockMs(stop_at), ...at });
        this.stop(a, stop_at, 'barge_in');
      } else {
        // The server leaves the answer to the client: it goes on until a response.cancel.
        during = 'barge_in';
        this.add({ kind: 'barge_in', t_ms: clockMs(t), answer: a.n, ...at });
      }
    }
    this.current = { index, ...at, during };
  }

  private onSpeechEnd(sample: number): void {
    const t = this.clockOf(sample, true);
    const u = this.current ?? { index: this.utterances - 1, during: null };
    this.current = null;
    const after = u.during === 'backchannel' ? { means: 'backchannel' as const } : this.silenceAfter(u.index);
    const at = u.step === undefined ? {} : { step: u.step };
    const input_ms = (sample / this.input_rate) * 1000;
    this.add({ kind: 'speech_end', t_ms: clockMs(t), input_ms, utterance: u.index, ...at, means: after.means });
    this.paced?.sink.speech?.('end', input_ms);
    // The model answers unless it is still talking (an answer out that does not stop).
    if (this.answer && !this.answer.stopping) return;
    if (after.means === 'turn_end') this.planAnswer('turn_end', t + (this.settings.respond_after_ms * this.factor()) / 1000, after.step);
    else if (after.means === 'pause' && this.settings.takeover_after_ms > 0) this.planAnswer('takeover', t + this.settings.takeover_after_ms / 1000, after.step);
  }

  private planAnswer(why: Plan['why'], due_s: number, step: number | undefined): void {
    const begin_s = due_s - this.settings.answer.onset_sample / this.settings.answer.rate;
    const plan: Plan = { why, due_s, begin_s, ...(step === undefined ? {} : { step }), cancelTimer: null };
    this.plan = plan;
    if (!this.paced) return;
    plan.cancelTimer = this.clock.arm(Math.max(0, (begin_s - this.clock.now_s()) * 1000), () => {
      plan.cancelTimer = null;
      // An answer still stopping: this one begins when it has.
      if (this.plan === plan && !this.answer && !this.ending) this.begin(this.clock.now_s());
    });
  }

  private dropPlan(): void {
    this.plan?.cancelTimer?.();
    this.plan = null;
  }

  /** vllm-omni: a response may open now; a plan that waited for it begins. */
  ready(): void {
    const plan = this.plan;
    if (!this.closed && plan && plan.cancelTimer === null && !this.answer && !this.ending) this.begin(this.clock.now_s());
  }

  /** The planned answer begins: its first sample plays at `at_s` (turn-based: unless the dialect cannot open a response yet). */
  private begin(at_s: number): void {
    if (this.paced?.sink.canStart && !this.paced.sink.canStart()) return;
    const plan = this.plan as Plan;
    this.plan = null;
    plan.cancelTimer?.();
    const a: Answer = {
      n: this.answers++,
      why: plan.why,
      due_s: plan.due_s,
      ...(plan.step === undefined ? {} : { step: plan.step }),
      sent: 0,
      cut: this.settings.answer.samples,
      next_s: at_s,
      voiced_end_s: at_s,
      voiced: false,
      stopping: null,
      cancelTimer: null,
    };
    this.answer = a;
    this.recent.push(a);
    if (this.recent.length > RECENT_KEPT) this.recent.shift();
    if (!this.paced) return;
    this.paced.sink.start(a.n);
    this.paceUnit(a, at_s);
  }

  /** Turn-based: the next unit of answer `a`, due at `due_s` (deadlines from the answer's start, never from the last fire). */
  private paceUnit(a: Answer, due_s: number): void {
    a.cancelTimer = null;
    if (this.answer !== a || this.closed) return;
    const paced = this.paced as { sink: AnswerSink; unit_ms: number };
    const rate = this.settings.answer.rate;
    const unit = Math.round((rate * paced.unit_ms) / 1000);
    const now = this.clock.now_s();
    const p = Math.max(now, this.playout_s, a.next_s);
    const from = a.sent;
    const take = Math.min(unit, a.cut - from);
    if (take > 0) {
      paced.sink.audio(a.n, this.settings.answer.pcm.subarray(from * 2, (from + take) * 2));
      this.emit(a, p, take, null, 0);
      this.playout_s = a.next_s;
    }
    if (this.answer !== a) return;
    const next = due_s + paced.unit_ms / 1000;
    a.cancelTimer = this.clock.arm(Math.max(0, (next - now) * 1000), () => this.paceUnit(a, next));
  }

  /**
   * Up to `room` samples of answer `a` go out, the first playing at `p`; into `out` at `offset`
   * (native) or already sent by the caller (turn-based). Logs its onset and its end as they go.
   */
  private emit(a: Answer, p: number, room: number, out: Buffer | null, offset: number): void {
    const audio = this.settings.answer;
    const from = a.sent;
    const take = Math.max(0, Math.min(room, a.cut - from));
    if (out) audio.pcm.copy(out, offset * 2, from * 2, (from + take) * 2);
    a.sent = from + take;
    a.next_s = p + take / audio.rate;
    if (!a.voiced && audio.onset_sample >= from && audio.onset_sample < a.sent) {
      a.voiced = true;
      const t = p + (audio.onset_sample - from) / audio.rate;
      this.add({ kind: 'answer_start', t_ms: clockMs(t), answer: a.n, why: a.why, due_ms: clockMs(a.due_s), ...(a.step === undefined ? {} : { step: a.step }) });
    }
    const voicedEnd = audio.voicedEndBefore(a.sent);
    if (a.voiced && voicedEnd > from) a.voiced_end_s = p + (voicedEnd - from) / audio.rate;
    if (a.sent >= a.cut) this.finish(a);
  }

  /** Answer `a` goes silent at `stop_at` (or where its audio already went, if later). */
  private stop(a: Answer, stop_at: number, cause: StopCause): void {
    a.stopping = cause;
    const rate = this.settings.answer.rate;
    a.cut = Math.min(a.cut, a.sent + Math.max(0, Math.ceil((stop_at - a.next_s) * rate - 1e-6)));
    if (a.sent >= a.cut) {
      a.cancelTimer?.();
      this.finish(a);
    }
  }

  /** Answer `a`'s audio is all out: logged; a turn-based response ends (a stopped one when its audio has played). */
  private finish(a: Answer): void {
    if (this.answer !== a) return;
    this.answer = null;
    a.cancelTimer?.();
    a.cancelTimer = null;
    // A stop that came too late to cut anything leaves the answer done.
    const cause = a.stopping !== null && a.cut < this.settings.answer.samples ? a.stopping : null;
    this.add({ kind: 'answer_end', t_ms: clockMs(a.voiced ? a.voiced_end_s : a.next_s), answer: a.n, silent_ms: clockMs(a.next_s), why: cause ?? 'done' });
    if (!this.paced) return;
    const sink = this.paced.sink;
    if (cause === null || cause === 'client_cancel') {
      sink.end(a.n, cause ? 'cancelled' : 'completed', cause ?? undefined);
      this.afterEnd(a);
      return;
    }
    // The model stops speaking where its audio ends: the response ends then, not when its last delta left.
    this.ending = a;
    this.endTimer = this.clock.arm(Math.max(0, (a.next_s - this.clock.now_s()) * 1000), () => {
      this.endTimer = null;
      this.ending = null;
      if (this.closed) return;
      sink.end(a.n, 'cancelled', cause);
      this.afterEnd(a);
    });
  }

  /** Turn-based: a plan made while answer `a` was out begins once its response has ended, or when it is due. */
  private afterEnd(a: Answer): void {
    const plan = this.plan;
    if (plan && plan.cancelTimer === null) this.begin(Math.max(this.clock.now_s(), a.next_s));
  }
}
