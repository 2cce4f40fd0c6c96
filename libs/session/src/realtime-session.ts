import { ConversationPlayer, pcm16BytesPerMs, withTrailingSilence, type PacketSource } from '@duplex-bench/audio';
import { admitted, createSessionFlow, NATIVE_ADMISSION, trailingSilenceMs, withSessionCamera, type CameraFrames, type Connection, type DialectConfig } from '@duplex-bench/transport';
import type { SessionTraceSink } from '@duplex-bench/tracer';
import { closeAfterFault } from './close-after-fault';
import type { SessionContext } from './context';
import { foldResult } from './fold-result';
import { flowOptions, openAttempt } from './open-attempt';
import { endedBy } from './outcome';
import { emptyResult, type SessionResult } from './result';
import type { SessionBook } from './session-book';
import { ServerErrors } from './server-errors';
import { transition, type SessionState } from './session-state';
import { streamInput } from './stream-input';
import { untilInputEnd } from './until-input-end';

/**
 * One realtime session in the run's dialect, as a state machine (`session-state.ts`). `open`
 * connects and shakes hands (`open-attempt.ts`), retried on a full server's refusal
 * (`admission.ts`). `stream` sends every packet from `start_s` (`stream-input.ts`), ends the input
 * once it has played out (`until-input-end.ts`), and lets the dialect's flow drain and close; a
 * fault in any state closes the session (`close-after-fault.ts`), and `outcome.ts` says what ended
 * it. Each state's work takes the session's record (`session-book.ts`); the result is folded from
 * it at the end (`fold-result.ts`).
 */
export class RealtimeSession {
  private current: SessionState = 'idle';
  private readonly book: SessionBook;
  /** The run's dialect, with this session's own camera when it has one. */
  private readonly dialect: DialectConfig;

  constructor(
    readonly id: string,
    ctx: SessionContext,
    sink: SessionTraceSink,
    /** This session's input; the run's shared packets when not given. */
    packets: PacketSource = ctx.packets,
    /** This session's camera frames (a dataset sample's); the run's `--video` when not given. */
    video?: CameraFrames,
  ) {
    this.dialect = withSessionCamera(ctx.dialect, video);
    this.book = {
      id,
      ctx,
      sink,
      // The silence the dialect's server needs after the input to close the last turn (vLLM-Omni under server VAD).
      packets: withTrailingSilence(packets, trailingSilenceMs(ctx.dialect)),
      conversation: packets instanceof ConversationPlayer ? packets : null,
      errors: new ServerErrors(),
      opening: { connected_s: null, handshake_s: null },
      grant: { output_sample_rate: ctx.output_sample_rate },
      input: { bytes: 0 },
      conn: null,
      flow: createSessionFlow(this.dialect, id),
      reading: [],
      broken: null,
      admission_refusals: 0,
      origin_s: null,
      inputOver: false,
      responses: null,
      units: null,
      unitsDone$: null,
      voice: null,
    };
  }

  /** Where the session is in its life. */
  get state(): SessionState {
    return this.current;
  }

  private enter(next: SessionState): void {
    this.current = transition(this.current, next);
  }

  /** When the last attempt's connection opened and its handshake completed, clock seconds (an arrival's connect and handshake latency). */
  get opening(): Readonly<SessionBook['opening']> {
    return this.book.opening;
  }

  /** The session's connection; exists once `open()` was called. */
  get conn(): Connection {
    if (!this.book.conn) throw new Error(`session ${this.id} was never opened`);
    return this.book.conn;
  }

  /** The input unit the server announced in its handshake, if it did (after `open`). */
  get serverChunkPeriodMs(): number | undefined {
    return this.book.grant.chunk_period_ms;
  }

  /**
   * Connects and completes the handshake, retried on a full server's refusal by the session's
   * admission policy; `refused` is told of each refusal (the server was reached, and is full).
   */
  async open(hooks: { refused?: () => void } = {}): Promise<void> {
    const b = this.book;
    await admitted(
      () => {
        this.enter('connecting');
        this.enter('handshaking');
        return openAttempt(b);
      },
      {
        policy: b.ctx.admission ?? NATIVE_ADMISSION,
        url: b.ctx.url,
        session_id: this.id,
        timers: () => this.conn.timers,
        // Each refusal that is retried is an admission record in the trace; the one that spends the
        // retries is the session's error alone, as sglang-omni's client records them (`admit`).
        onRefused: (n, refusal, retried) => {
          b.admission_refusals = n;
          if (retried) b.sink.admission(n, refusal, b.ctx.clock.now_s());
          hooks.refused?.();
        },
        // A refused attempt leaves nothing behind: its connection, its receivers and its counts go.
        reset: () => {
          for (const s of b.reading) s.unsubscribe();
          b.errors.forget();
          b.broken = null;
          b.flow = createSessionFlow(this.dialect, this.id);
        },
      },
    );
    this.enter('ready');
  }

  /** Throws what ended the session while it streamed or waited: a broken socket or a server error. */
  private throwIfEnded(): void {
    if (this.book.broken) throw this.book.broken;
    if (this.book.errors.stoppedBy) throw this.book.errors.stoppedBy;
  }

  /** Streams every packet from `start_s`, ends the input, drains and closes; or closes after a fault. Never rejects. */
  async stream(start_s: number): Promise<SessionResult> {
    const b = this.book;
    const result = emptyResult(this.id);
    try {
      try {
        // A server error between the handshake and the start ends the session before any packet.
        this.throwIfEnded();
        this.enter('streaming');
        await streamInput(b, this.conn, result, start_s);
      } finally {
        b.ctx.allSent?.done();
      }
      this.throwIfEnded();
      this.enter('ending_input');
      await untilInputEnd({
        ctx: b.ctx,
        origin_s: b.origin_s,
        input_bytes: b.input.bytes,
        sample_rate: b.packets.sample_rate,
        responses: b.responses,
        stopped$: b.errors.stopped$,
        stopped: () => b.errors.stoppedBy !== null,
        throwIfEnded: () => this.throwIfEnded(),
      });
      this.throwIfEnded();
      this.enter('draining');
      const report = await b.flow.end(this.conn, flowOptions(b));
      if (report.drain) result.drain = report.drain;
      // A stream cut short (SIGINT) ends its session cleanly but is not a complete measurement.
      if (result.packets_sent < b.packets.packet_count && !b.inputOver) {
        Object.assign(result, { reason: 'interrupted', message: `stopped after ${result.packets_sent} of ${b.packets.packet_count} packets` });
        // The client chose to stop: the units it never sent were never input, neither expected nor missed.
        b.units?.inputEnded(b.input.bytes / pcm16BytesPerMs(b.packets.sample_rate));
      } else result.completed = true;
    } catch (err) {
      Object.assign(result, endedBy(err, b.errors.last));
      await this.closeAfter(err, result);
    }
    return this.finish(result);
  }

  /** Ends a session that never got to stream (its open failed). */
  async abandon(err: unknown): Promise<SessionResult> {
    const result: SessionResult = { ...emptyResult(this.id), ...endedBy(err, this.book.errors.last) };
    if (this.book.conn) await this.closeAfter(err, result);
    return this.finish(result);
  }

  private async closeAfter(err: unknown, result: SessionResult): Promise<void> {
    this.enter('closing');
    const note = await closeAfterFault(this.conn, this.book.flow, err, flowOptions(this.book));
    if (note) result.message = `${result.message}; then ${note}`;
  }

  private async finish(result: SessionResult): Promise<SessionResult> {
    for (const s of this.book.reading) s.unsubscribe();
    await foldResult(result, this.book);
    this.enter('done');
    this.book.ctx.onSessionEnd?.(result);
    return result;
  }
}
