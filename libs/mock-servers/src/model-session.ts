import type { TimerHost } from '@duplex-bench/pacer';
import type { TurnEnd, TurnFrames } from './turn-frames';

/** How the model profile behaves: timings a test can check against. */
export interface ModelOptions {
  /** Server-side delay from a turn's start (response.created) to its first audio. */
  ttfp_ms: number;
  /** Real-time factor of generation: a unit of `unit_ms` audio takes `unit_ms × rtf` to produce. */
  rtf: number;
  /** Units sent together once that many are produced (or the turn ends). */
  burst_units: number;
  /** A new model turn starts every this many seconds of input. */
  turn_every_s: number;
  /** When set, each transcript delta carries `sglang.num_tokens` and response.done `num_tokens_out`. */
  tokens_per_step?: number;
  /**
   * The server's load as a factor of what it holds (active sessions over its capacity; 1 or less:
   * within it). Past its capacity a model shares a fixed compute: each unit takes the longer of
   * `unit_ms × rtf` and `unit_ms × load`, and the first audio `ttfp_ms × load`.
   */
  load?: () => number;
}

interface Unit {
  response_id: string;
  unit_id: number;
  due_s: number;
  /** Input the unit holds: a whole unit, or the remainder at the end of the input. */
  duration_ms: number;
}

interface Turn {
  response_id: string;
  units: number;
  /** Output units of the turn sent so far. */
  emitted: number;
  tokens: number;
  /**
   * The turn's transcript, as the unit id of its first word: a turn's units are emitted in id
   * order, one word each (`WORDS[id % 6]`), so the text sent so far is `words` words from there.
   * Kept as a number, not a string grown per unit: an hour-long turn's string of one concatenation
   * per unit held about 700 B a second per session (512 sessions ran out of heap in an hour).
   */
  first_word: number | null;
  /** Words (transcript deltas) sent so far. */
  words: number;
}

const WORDS = ['the', 'model', 'answers', 'while', 'you', 'speak'];

/** The words a turn sent, one per emitted unit from its first: the text its transcript deltas carried. */
function transcriptOf(turn: Turn): string {
  const first = turn.first_word;
  if (first === null) return '';
  let text = '';
  for (let i = 0; i < turn.words; i++) text += `${WORDS[(first + i) % WORDS.length]} `;
  return text;
}

/**
 * Due times are sums of unit steps in seconds, so 0.58 + 0.04 lands a hair past 0.62: a unit counts
 * as due within a nanosecond of its time, or it would wait a whole extra millisecond (found running
 * the model in virtual time, where every figure came out exact but 1 ms late).
 */
const DUE_SLACK_S = 1e-9;

/**
 * One session of the model mock: every whole input unit owes one output unit (80 ms of input, 80
 * ms of output, silence included). Turns start every `turn_every_s` of input; each unit is produced
 * `unit_ms × rtf` after the previous one, the first `ttfp_ms` after its turn started, and units go
 * out in bursts of `burst_units`.
 */
export class ModelSession {
  private readonly queue: Unit[] = [];
  private readonly turns = new Map<string, Turn>();
  private current: Turn | null = null;
  private turnCount = 0;
  private nextUnitId = 0;
  private chunkSeq = 0;
  private lastDue_s = 0;
  private cancelTimer: (() => void) | null = null;
  private ending: (() => void) | null = null;

  constructor(
    private readonly options: ModelOptions,
    private readonly unit_ms: number,
    private readonly frames: TurnFrames,
    /** Its clock and its one timer: real, or an RxJS scheduler's virtual time in tests. */
    private readonly clock: TimerHost,
    private readonly send: (frame: string) => void,
    /** Each output unit's payload as it goes out, given its index in its turn (undefined: the frames' silence): behaviour mode's answer, or `--leading-silence-ms`. */
    private readonly voice?: (unit_in_turn: number) => string | undefined,
  ) {}

  /** Input unit `index` (0-based) arrived whole; `extra_ms` more compute it costs (its camera frames), grown with the load as a unit's time is. */
  onInputUnit(index: number, extra_ms = 0): void {
    const turn_at = Math.floor((index * this.unit_ms) / (this.options.turn_every_s * 1000));
    if (!this.current || turn_at >= this.turnCount) this.startTurn();
    this.enqueue(this.unit_ms, extra_ms);
  }

  /**
   * Input ended. `tail_ms` of input beyond the last whole unit is padded to a whole unit, so it owes
   * a whole unit of output while its unit reports `tail_ms`. `done` runs after the last output and
   * the end of every open turn.
   */
  onInputEnd(tail_ms: number, done: () => void): void {
    if (tail_ms > 0) {
      if (!this.current) this.startTurn();
      this.enqueue(tail_ms);
    }
    this.ending = done;
    this.pump();
  }

  /** The client closed the session: queued output is dropped and every open turn ends cancelled. */
  cancel(): void {
    this.dispose();
    this.queue.length = 0;
    this.current = null;
    this.ending = null;
    for (const response_id of [...this.turns.keys()]) this.finishTurn(response_id, 'client_closed');
  }

  /** The current turn takes no more input: it ends once its output is out. */
  closeTurn(): void {
    const turn = this.current;
    if (!turn) return;
    this.current = null;
    if (!this.queue.some((u) => u.response_id === turn.response_id)) this.finishTurn(turn.response_id);
    else this.pump();
  }

  /**
   * Input the model has taken and not yet produced from, in ms: the queued units whose output is
   * not due yet (a real server's accepted minus consumed samples, which it bounds by its grant's
   * `max_input_bytes`). Produced units waiting for their burst are consumed.
   */
  backlog_ms(): number {
    const now = this.clock.now_s() + DUE_SLACK_S;
    let ms = 0;
    for (let i = this.queue.length - 1; i >= 0 && this.queue[i].due_s > now; i--) ms += this.queue[i].duration_ms;
    return ms;
  }

  /** Whether a turn is taking input. */
  get inTurn(): boolean {
    return this.current !== null;
  }

  /** The oldest response still in progress (created and not done), or null. */
  get activeResponse(): string | null {
    const first = this.turns.keys().next();
    return first.done ? null : first.value;
  }

  /** Starts a turn owed `units` output units and closes it (a response asked for by the client). */
  respond(units: number): void {
    this.startTurn();
    for (let i = 0; i < units; i++) this.enqueue();
    this.closeTurn();
  }

  dispose(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
  }

  /** Starts a turn (`response.created`); input units that follow are owed to it. */
  startTurn(): void {
    // A turn whose output is all out ends now; one with output still queued ends when that goes.
    const previous = this.current;
    if (previous && !this.queue.some((u) => u.response_id === previous.response_id)) this.finishTurn(previous.response_id);
    const response_id = `resp_${this.turnCount++}`;
    const turn: Turn = { response_id, units: 0, emitted: 0, tokens: 0, first_word: null, words: 0 };
    this.turns.set(response_id, turn);
    this.current = turn;
    for (const frame of this.frames.started(response_id)) this.send(frame);
    const ttfp_ms = this.options.ttfp_ms * Math.max(1, this.options.load?.() ?? 1);
    this.lastDue_s = Math.max(this.lastDue_s, this.clock.now_s() + ttfp_ms / 1000 - this.step_s());
  }

  private step_s(): number {
    return (this.unit_ms * Math.max(this.options.rtf, this.options.load?.() ?? 0)) / 1000;
  }

  /** One input unit of the current turn: one output unit owed. */
  enqueue(duration_ms = this.unit_ms, extra_ms = 0): void {
    const turn = this.current as Turn;
    const extra_s = extra_ms > 0 ? (extra_ms * Math.max(1, this.options.load?.() ?? 1)) / 1000 : 0;
    const due_s = Math.max(this.lastDue_s + this.step_s() + extra_s, this.clock.now_s());
    this.lastDue_s = due_s;
    turn.units++;
    this.queue.push({ response_id: turn.response_id, unit_id: this.nextUnitId++, due_s, duration_ms });
    this.pump();
  }

  /** Sends every burst that is due; arms one timer for the next. */
  private pump(): void {
    this.dispose();
    const now = this.clock.now_s() + DUE_SLACK_S;
    for (;;) {
      const due = this.queue.filter((u) => u.due_s <= now);
      const head = this.queue[0];
      if (!head) break;
      // A burst goes when enough units are produced, or when what is produced ends its turn or the input.
      const sameTurn = due.filter((u) => u.response_id === head.response_id);
      const turnComplete = this.queue.every((u) => u.response_id !== head.response_id || u.due_s <= now) && (this.current?.response_id !== head.response_id || this.ending !== null);
      if (sameTurn.length === 0 || (sameTurn.length < this.options.burst_units && !turnComplete)) break;
      const burst = this.queue.splice(0, Math.min(sameTurn.length, this.options.burst_units));
      for (const u of burst) this.emit(u);
      if (!this.queue.some((u) => u.response_id === head.response_id) && (this.current?.response_id !== head.response_id || this.ending)) {
        this.finishTurn(head.response_id);
      }
    }
    if (this.queue.length > 0) {
      const at = this.nextSendAt();
      // Null: the current turn waits for more input to fill its burst; the next input unit pumps.
      if (at !== null) this.cancelTimer = this.clock.arm(Math.max(1, Math.ceil((at - now) * 1000)), () => this.pump());
      return;
    }
    if (this.ending) {
      if (this.current && this.turns.has(this.current.response_id)) this.finishTurn(this.current.response_id);
      const ending = this.ending;
      this.ending = null;
      ending();
    }
  }

  /** When the next burst can go: when `burst_units` units of the head's turn are due, or its last one if the turn is over. */
  private nextSendAt(): number | null {
    const head = this.queue[0];
    const ofTurn = this.queue.filter((u) => u.response_id === head.response_id);
    const turnOver = this.current?.response_id !== head.response_id || this.ending !== null;
    if (ofTurn.length < this.options.burst_units && !turnOver) return null;
    return ofTurn[Math.min(this.options.burst_units, ofTurn.length) - 1].due_s;
  }

  private emit(u: Unit): void {
    const turn = this.turns.get(u.response_id) as Turn;
    const t_start_ms = u.unit_id * this.unit_ms;
    this.send(this.frames.audio(u.response_id, u.unit_id, this.chunkSeq++, t_start_ms, u.duration_ms, this.voice?.(turn.emitted++)));
    const word = `${WORDS[u.unit_id % WORDS.length]} `;
    const tokens = this.options.tokens_per_step;
    if (tokens) turn.tokens += tokens;
    turn.first_word ??= u.unit_id;
    turn.words++;
    this.send(this.frames.transcript(u.response_id, word, tokens));
    const done = this.frames.unitDone(u.unit_id, t_start_ms, u.duration_ms);
    if (done) this.send(done);
  }

  private finishTurn(response_id: string, end: TurnEnd = 'stop'): void {
    const turn = this.turns.get(response_id);
    if (!turn) return;
    this.turns.delete(response_id);
    for (const frame of this.frames.finished(response_id, transcriptOf(turn), this.options.tokens_per_step ? turn.tokens : undefined, end)) this.send(frame);
  }
}
