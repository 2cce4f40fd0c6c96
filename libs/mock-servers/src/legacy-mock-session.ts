import type WebSocket from 'ws';
import { pcm16BytesPerMs } from '@duplex-bench/audio';
import { decodeFrameBytes, LegacyEvent, LegacyServerEvents, type DecodedFrame, type LegacyResponseEnd } from '@duplex-bench/protocol';
import type { ArrivalOffsets } from './arrival-offsets';
import { ENERGY_VAD, EnergyVad, type VadEdge } from './energy-vad';
import type { LeadingSilence } from './leading-silence';
import { injectFault, type MockFault } from './mock-fault';
import type { ModelOptions } from './model-session';
import type { MockHost } from './openai-mock-session';

/** The server VAD's defaults when the session states none (sglang_omni/serve/realtime/vad.py `VADConfig`). */
const VAD_DEFAULTS = { silence_duration_ms: 500, prefix_padding_ms: 300 };

export interface LegacyMockOptions {
  input_sample_rate: number;
  output_sample_rate: number;
  /** Output audio per `response.audio.delta`, ms. */
  delta_ms: number;
  /** First audio `ttfp_ms` after `response.created`; each further delta `delta_ms × rtf` later (both stretched by `load` past capacity). */
  model: ModelOptions;
  /** Each response's deltas, silence then a tone (`--leading-silence-ms`); null: silence. */
  leading: LeadingSilence | null;
  /**
   * A turn model is loaded: `semantic_vad` runs as asked. Without one the facade substitutes
   * server_vad and says so in the echo (turn_detector.py `build_turn_detector`; client.py's note).
   */
  smart_turn: boolean;
}

/** One user turn the VAD cut and committed, waiting for its answer. */
interface Turn {
  item_id: string;
  speech_ms: number;
}

interface Answer {
  response_id: string;
  item_id: string;
  /** The user turn it answers. */
  turn: Turn;
  deltas: number;
  sent: number;
  text: string;
  cancel: (() => void) | null;
}

/**
 * One session of sglang-omni's legacy turn-based protocol (`LegacyRealtimeFacade`), as the
 * conversation session behind it works (sglang_omni/serve/realtime/session.py and events.py at
 * 0b4c9e8b, turn_detector.py at 3cab782f, vad.py) and as the facade's stand-in in sglang-omni's own
 * tests answers (tests/unit_test/benchmarks/test_duplex_legacy.py at 7d89c7ef):
 *
 * - `session.created` on connect, a beta session object (`modalities: ["text"]`, `pcm16` both ways);
 *   every `session.update` is answered with `session.updated` and the whole session, a no-op one
 *   (the client's liveness probe) unchanged; `turn_detection` is echoed as it runs;
 * - appends get no receipt; the server's VAD (energy here, in 10 ms frames; its silence the
 *   session's `silence_duration_ms`, 500 ms by default) sends `speech_started` (its start less the
 *   300 ms prefix padding), then `speech_stopped` and `committed`, and each committed turn is
 *   answered in order: `response.created`, `response.audio.delta` (24 kHz, `content_index` 1),
 *   `response.text.delta`, `response.audio.done`, `response.text.done`, `response.done`
 *   (`completed`, `stop`), then the turn's transcription;
 * - speech over an answer cuts it: `speech_started`, `output_audio_buffer.cleared`, and
 *   `response.done` `cancelled` with `turn_detected` (unless `interrupt_response: false`);
 * - no end of input, drain or close event: the client closes the socket.
 */
export class LegacyMockSession {
  private readonly events: LegacyServerEvents;
  private readonly arrivals: ArrivalOffsets;
  private readonly session: Record<string, unknown>;
  private vad: EnergyVad | null = null;
  private interrupts = true;
  private prefix_padding_ms = VAD_DEFAULTS.prefix_padding_ms;
  private bytes = 0;
  private appends = 0;
  private items = 0;
  private responses = 0;
  /** The user turn being spoken: its item and where its speech started, ms. */
  private speech: { item_id: string; start_ms: number } | null = null;
  private readonly queue: Turn[] = [];
  private answer: Answer | null = null;
  private silent = false;
  private disposed = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly host: MockHost,
    private readonly id: string,
    private readonly options: LegacyMockOptions,
    private readonly silence_b64: string,
    private readonly fault: MockFault | null,
  ) {
    this.events = new LegacyServerEvents(id);
    this.arrivals = host.arrivals();
    this.session = {
      id: `sess_${id}`,
      object: 'realtime.session',
      model: 'duplex-bench-mock',
      capabilities: { turn_detection: ['server_vad', 'semantic_vad'] },
      modalities: ['text'],
      instructions: 'You are a helpful realtime voice assistant. Respond conversationally.',
      input_audio_format: 'pcm16',
      output_audio_format: 'pcm16',
      temperature: 0.8,
      max_response_output_tokens: 'inf',
    };
  }

  start(): void {
    this.send(this.events.sessionCreated({ ...this.session }));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.host.arrivalsDone(this.arrivals);
    this.answer?.cancel?.();
  }

  private send(frame: string): void {
    // A server that stopped answering sends nothing more, timers and queued output included.
    if (this.silent || this.disposed) return;
    this.host.send(this.ws, frame);
  }

  onMessage(data: Buffer, isBinary: boolean, arrived_s: number): void {
    if (this.silent) return;
    if (isBinary) {
      this.send(this.events.error('invalid_request_error', 'binary_frame', 'text frames only'));
      return;
    }
    let frame: DecodedFrame;
    try {
      frame = decodeFrameBytes(data);
      frame.event();
    } catch {
      this.send(this.events.error('invalid_request_error', 'invalid_json', 'frame is not a JSON event'));
      return;
    }
    const client_event_id = typeof frame.event().event_id === 'string' ? (frame.event().event_id as string) : undefined;
    switch (frame.type) {
      case LegacyEvent.sessionUpdate:
        return this.onSessionUpdate(frame.event(), client_event_id);
      case LegacyEvent.append:
        return this.onAppend(frame.event().audio, arrived_s);
      case 'input_audio_buffer.clear':
        // The buffered input is dropped and the VAD starts over (session.py `handle_audio_clear`).
        this.speech = null;
        this.vad = this.makeVad();
        this.send(this.events.inputCleared());
        return;
      default:
        // The facade answers a conversation event it does not take (sglang's own, a commit, a close) with a non-fatal error.
        this.send(this.events.error('invalid_request_error', 'not_supported', 'unsupported conversation event', client_event_id));
    }
  }

  /**
   * A session update: the fields given replace the session's (the facade validates a candidate
   * first, so a refused one changes nothing); turn detection runs as the effective config says.
   */
  private onSessionUpdate(event: Record<string, unknown>, client_event_id: string | undefined): void {
    const update = event.session;
    if (update === null || typeof update !== 'object' || Array.isArray(update)) {
      this.send(this.events.error('invalid_request_error', 'invalid_value', 'session.update needs a session object', client_event_id));
      return;
    }
    const patch = update as Record<string, unknown>;
    if (patch.modalities !== undefined) {
      const set = Array.isArray(patch.modalities) ? [...new Set(patch.modalities as unknown[])].sort().join(',') : '';
      if (set !== 'text' && set !== 'audio,text') {
        this.send(this.events.error('invalid_request_error', 'unsupported_modality', "modalities must be ['text'] or ['text', 'audio'].", client_event_id));
        return;
      }
    }
    if (patch.output_audio_format !== undefined && patch.output_audio_format !== 'pcm16') {
      this.send(this.events.error('invalid_request_error', 'unsupported_audio_format', 'Only PCM16 output audio is supported.', client_event_id));
      return;
    }
    let detection: Record<string, unknown> | undefined;
    if (patch.turn_detection !== undefined && patch.turn_detection !== null) {
      const asked = patch.turn_detection as Record<string, unknown>;
      if (typeof asked !== 'object' || (asked.type !== 'server_vad' && asked.type !== 'semantic_vad')) {
        this.send(this.events.error('invalid_request_error', 'invalid_value', 'turn_detection.type must be server_vad or semantic_vad', client_event_id));
        return;
      }
      detection = this.effective(asked);
    }
    Object.assign(this.session, patch, detection ? { turn_detection: detection } : {});
    if (detection) {
      this.interrupts = detection.interrupt_response !== false;
      this.prefix_padding_ms = typeof detection.prefix_padding_ms === 'number' ? detection.prefix_padding_ms : VAD_DEFAULTS.prefix_padding_ms;
      this.vad = this.makeVad();
    }
    this.send(this.events.sessionUpdated({ ...this.session }));
  }

  /** The turn detection that runs for `asked` (turn_detector.py): semantic_vad only with a turn model, its eagerness named; else server_vad. */
  private effective(asked: Record<string, unknown>): Record<string, unknown> {
    if (asked.type === 'semantic_vad' && this.options.smart_turn) {
      const eagerness = typeof asked.eagerness === 'string' && asked.eagerness !== 'auto' ? asked.eagerness : 'medium';
      // A turn model ends the turn by itself: the silence setting is server_vad's and goes.
      const rest = { ...asked };
      delete rest.silence_duration_ms;
      return { ...rest, type: 'semantic_vad', eagerness };
    }
    return { ...asked, type: 'server_vad' };
  }

  /** The session's VAD: speech ends after the session's silence (semantic_vad, which this mock hears by energy too, after the default). */
  private makeVad(): EnergyVad {
    const stated = (this.session.turn_detection as { silence_duration_ms?: unknown } | undefined)?.silence_duration_ms;
    const hangover_ms = typeof stated === 'number' && stated > 0 ? stated : VAD_DEFAULTS.silence_duration_ms;
    return new EnergyVad(this.options.input_sample_rate, { ...ENERGY_VAD, hangover_ms });
  }

  private onAppend(audio: unknown, arrived_s: number): void {
    const pcm = typeof audio === 'string' ? Buffer.from(audio, 'base64') : Buffer.alloc(0);
    const per_ms = pcm16BytesPerMs(this.options.input_sample_rate);
    // Where this append sits in the stream says when it was due: its first byte's time.
    this.arrivals.add(arrived_s * 1000 - this.bytes / per_ms);
    this.appends++;
    this.bytes += pcm.length;
    if (this.fault && this.appends >= this.fault.after_appends && this.applyFault(this.fault)) return;
    this.vad ??= this.makeVad();
    this.vad.push(pcm, (edge) => this.onEdge(edge));
  }

  private onEdge(edge: VadEdge): void {
    const ms = (edge.sample * 1000) / this.options.input_sample_rate;
    if (edge.kind === 'start') {
      const item_id = `item_${this.id}_${this.items++}`;
      this.speech = { item_id, start_ms: ms };
      this.send(this.events.speechStarted(item_id, Math.max(0, Math.floor(ms - this.prefix_padding_ms))));
      if (this.answer && this.interrupts) this.cut(this.answer);
      return;
    }
    const speech = this.speech;
    if (!speech) return;
    this.speech = null;
    this.send(this.events.speechStopped(speech.item_id, Math.floor(ms)));
    this.send(this.events.committed(speech.item_id));
    this.queue.push({ item_id: speech.item_id, speech_ms: ms - speech.start_ms });
    if (!this.answer) this.next();
  }

  /** Active sessions over the server's capacity (0 without one): past 1 the model shares its compute. */
  private get load(): number {
    return this.options.model.load?.() ?? 0;
  }

  /** Answers the oldest committed turn: one delta of `delta_ms` per `delta_ms` of the user's speech. */
  private next(): void {
    const turn = this.queue.shift();
    if (!turn) return;
    const n = this.responses++;
    const answer: Answer = {
      response_id: `resp_${n}`,
      item_id: `item_resp_${n}`,
      turn,
      deltas: Math.max(1, Math.ceil(turn.speech_ms / this.options.delta_ms)),
      sent: 0,
      text: '',
      cancel: null,
    };
    this.answer = answer;
    this.send(this.events.responseCreated(answer.response_id));
    answer.cancel = this.host.clock.arm(this.options.model.ttfp_ms * Math.max(1, this.load), () => this.emit(answer));
  }

  private emit(a: Answer): void {
    a.cancel = null;
    const payload = this.options.leading ? this.options.leading.payload(a.sent) : this.silence_b64;
    this.send(this.events.audioDelta(a.response_id, a.item_id, payload));
    if (a.sent === 0) {
      a.text = 'the model answers';
      this.send(this.events.textDelta(a.response_id, a.item_id, a.text));
    }
    a.sent++;
    if (a.sent < a.deltas) {
      const step_ms = this.options.delta_ms * Math.max(this.options.model.rtf, this.load);
      a.cancel = this.host.clock.arm(step_ms, () => this.emit(a));
      return;
    }
    this.send(this.events.audioDone(a.response_id, a.item_id));
    this.send(this.events.textDone(a.response_id, a.item_id, a.text));
    this.finish(a, { status: 'completed', reason: 'stop' });
    // The turn's transcription follows its answer, as the conversation session's second pass does.
    this.send(this.events.transcriptionDelta(a.turn.item_id, 'hello'));
    this.send(this.events.transcriptionCompleted(a.turn.item_id, 'hello'));
    this.next();
  }

  /** The user spoke over an answer: its audio is dropped and it ends cancelled, after the `speech_started` already sent. */
  private cut(a: Answer): void {
    a.cancel?.();
    a.cancel = null;
    this.send(this.events.outputCleared(a.response_id, a.item_id));
    this.finish(a, { status: 'cancelled', reason: 'turn_detected' });
    this.next();
  }

  private finish(a: Answer, end: LegacyResponseEnd): void {
    this.send(this.events.responseDone(a.response_id, a.item_id, end, a.text, a.sent > 0));
    if (this.answer === a) this.answer = null;
  }

  /** Returns true when the append must not be answered. */
  private applyFault(f: MockFault): boolean {
    const shared = injectFault(
      f,
      {
        ws: this.ws,
        raw: (frame) => this.host.send(this.ws, frame),
        malformed: '{"type":"response.audio.delta","delta":',
        unknown: () => '{"type":"vendor.keepalive","event_id":"evt_keepalive"}',
        fatal: () => this.send(this.events.error('server_error', 'injected_fault', 'the test server gave up')),
        silence: () => {
          this.silent = true;
        },
        // A speech start whose audio_start_ms JSON cannot hold, once.
        nonFinite: () => this.send(this.events.speechStarted(`item_fault_${this.appends}`, 0).replace('"audio_start_ms":0', '"audio_start_ms":1e999')),
      },
      this.appends === f.after_appends,
    );
    if (shared !== 'dialect') return shared === 'skip';
    throw new RangeError(`fault ${f.action} is not defined for the legacy dialect`);
  }
}
