/**
 * The oracle's replay loop (oracle.py): one session's trace record by record, the state each
 * record leaves, and the verdict at the end of the trace. A record that fails to read ends its own
 * step part-way, as the oracle's loop stops a record at its first exception, and the replay goes on.
 */
import { NATIVE_INPUT_BYTES_PER_MS, NATIVE_INPUT_SAMPLE_RATE, type NativeProfile } from '@duplex-bench/protocol';
import { writtenAsFloat } from './python-json';
import { describe, dig, isObject, pyEqual, pyGet, pyType, show, unitNumber, type JsonObject } from './python-values';
import { pcmByteLength, readAdmission, readTraceRecord, readWireEvent, RecordError, type WireEvent } from './trace-records';

export interface NativeCheckMetrics {
  input_audio_s: number;
  output_audio_s: number;
  admission_denials: number;
  first_audio_packet_s: number | null;
  audio_packet_gap_max_s: number | null;
  input_output_overlap: boolean;
  drain_after_eos_s: number | null;
  close_ack_s: number | null;
}

export interface NativeCheckResult {
  status: 'pass' | 'fail' | 'not_exercised';
  violations: string[];
  coverage: { input_output_overlap: boolean };
  metrics: NativeCheckMetrics;
}

const INPUT_BYTES_PER_S = NATIVE_INPUT_BYTES_PER_MS * 1000;

/** Capabilities every native grant must state, compared by Python type and value. */
const REQUIRED_CAPABILITIES: ReadonlyArray<readonly [string, unknown]> = [
  ['interaction', 'native'],
  ['native_full_duplex', true],
  ['input_audio_format', { type: 'audio/pcm', rate: NATIVE_INPUT_SAMPLE_RATE }],
  ['tail_policy', 'pad'],
  ['microturn_ms', null],
  ['client_commit', false],
  ['proactive_output', false],
  ['pressure_policy', 'reject'],
  ['strict_order', true],
  ['supports_server_interrupt', false],
  ['supports_resume', false],
  ['supports_truncate', false],
];

/** Server receipts and the client command each acknowledges. */
const ACKNOWLEDGES: ReadonlyMap<string, string> = new Map([
  ['session.updated', 'session.update'],
  ['sglang.input_audio.accepted', 'input_audio_buffer.append'],
  ['sglang.input_audio.ended', 'sglang.input_audio.end'],
  ['sglang.input_audio.drained', 'sglang.input_audio.end'],
  ['session.closed', 'session.close'],
]);

/** The response terminals a native session may show: their status and the client command behind them. */
const TERMINAL_REASONS: ReadonlyMap<string, { status: string; command: string }> = new Map([
  ['stop', { status: 'completed', command: 'sglang.input_audio.end' }],
  ['client_closed', { status: 'cancelled', command: 'session.close' }],
]);

const MEDIA_DELTAS: ReadonlySet<string> = new Set([
  'response.output_audio.delta',
  'response.output_audio_transcript.delta',
  'response.output_text.delta',
]);

/** Steps a complete session shows exactly once: direction and event type. */
const ONCE_EACH: ReadonlyArray<readonly ['send' | 'receive', string]> = [
  ['receive', 'session.created'],
  ['send', 'session.update'],
  ['receive', 'session.updated'],
  ['send', 'sglang.input_audio.end'],
  ['receive', 'sglang.input_audio.ended'],
  ['receive', 'sglang.input_audio.drained'],
  ['send', 'session.close'],
  ['receive', 'session.closed'],
];

interface SentCommand {
  event: WireEvent;
  time_s: number;
  /** Input media accepted so far, in ms, when the command was sent. */
  input_end_ms: number;
}

interface ResponseState {
  /** The status of its response.done; null until then. */
  terminal: string | null;
  reason: string | null;
  audioDone: boolean;
  audioSeen: boolean;
  itemId: string | null;
}

/** One session's trace replayed record by record, as the oracle's loop keeps its state. */
export class NativeReplay {
  readonly violations: string[] = [];
  private readonly counts = new Map<string, number>();
  private readonly eventIds = { send: new Set<string>(), receive: new Set<string>() };
  private readonly sent = new Map<string, SentCommand>();
  private readonly acknowledged = new Set<string>();
  private readonly responses = new Map<string, ResponseState>();
  private readonly inputTimes: number[] = [];
  private readonly audioTimes: number[] = [];
  private readonly units: Array<{ index: bigint; duration_ms: number }> = [];
  private inputBytes = 0;
  private outputBytes = 0;
  private nextSeq = 0;
  private admissions = 0;
  /** session.created's `session.id`, any JSON value; null is Python's None. */
  private sessionId: unknown = null;
  private updated = false;
  private ended = false;
  private drained = false;
  private closed = false;
  private previousTime = -Infinity;
  private drainAfterEos: number | null = null;
  private closeAck: number | null = null;

  constructor(
    private readonly profile: NativeProfile,
    /** The retry limit the recording client used (run.json `max_admission_attempts`); absent: attempts need only count up from one. */
    private readonly max_admission_attempts?: number,
  ) {}

  private get unitMs(): number {
    return this.profile.native_unit_ms;
  }

  private get inputBytesPerUnit(): number {
    return Math.floor((NATIVE_INPUT_SAMPLE_RATE * this.unitMs) / 1000) * 2;
  }

  private get inputMs(): number {
    return this.inputBytes / NATIVE_INPUT_BYTES_PER_MS;
  }

  private check(ok: boolean, message: string): void {
    if (!ok) this.violations.push(message);
  }

  private count(direction: 'send' | 'receive', type: string): number {
    return this.counts.get(`${direction} ${type}`) ?? 0;
  }

  record(raw: unknown, index: number): void {
    try {
      const record = readTraceRecord(raw);
      this.check(record.time_s >= this.previousTime, `record ${index}: clock regressed from ${this.previousTime} s to ${record.time_s} s`);
      this.previousTime = record.time_s;
      if (record.direction === 'admission') this.admission(record.event);
      else if (record.direction === 'error') this.violations.push(`client error: ${show(pyGet(record.event, 'message'))}`);
      else this.wireEvent(record.direction, readWireEvent(record.event), record.time_s);
    } catch (error) {
      if (!(error instanceof RecordError)) throw error;
      this.violations.push(`record ${index}: ${error.message}`);
    }
  }

  private admission(event: JsonObject): void {
    const { attempt } = readAdmission(event);
    this.check(this.eventIds.send.size === 0 && this.eventIds.receive.size === 0, 'admission diagnostic after the session started');
    this.check(attempt === this.admissions + 1, `admission attempts are not contiguous from one: attempt ${attempt} after ${this.admissions}`);
    const limit = this.max_admission_attempts;
    this.check(limit === undefined || attempt <= limit, `admission attempt ${attempt} exceeds the recorded limit ${limit}`);
    this.admissions++;
  }

  private wireEvent(direction: 'send' | 'receive', event: WireEvent, time_s: number): void {
    const ids = this.eventIds[direction];
    this.check(!ids.has(event.event_id), `duplicate ${direction} event_id: ${event.event_id}`);
    ids.add(event.event_id);
    this.counts.set(`${direction} ${event.type}`, this.count(direction, event.type) + 1);
    this.check(!this.closed, `${event.type} after session.closed`);
    if (direction === 'send') this.clientCommand(event, time_s);
    else this.serverEvent(event, time_s);
  }

  // ---- client commands ----

  private clientCommand(event: WireEvent, time_s: number): void {
    switch (event.type) {
      case 'session.update':
        this.check(this.sessionId !== null, 'session.update before session.created');
        break;
      case 'input_audio_buffer.append':
        this.append(event, time_s);
        break;
      case 'sglang.input_audio.end':
        this.check(this.updated, 'EOS before session.updated');
        break;
      case 'session.close':
        this.check(this.drained, 'session.close before input drained');
        break;
      default:
        this.violations.push(`client command outside this scenario: ${event.type}`);
    }
    // An append with a bad payload never gets here: the oracle does not know it as sent.
    this.sent.set(event.event_id, { event, time_s, input_end_ms: this.inputMs });
  }

  private append(event: WireEvent, time_s: number): void {
    const { seq, t_start_ms } = event.sglang;
    this.check(this.updated, 'audio input before session.updated');
    this.check(this.count('send', 'sglang.input_audio.end') === 0, 'input after EOS');
    this.check(seq === this.nextSeq, `input sequence is not contiguous: seq ${show(seq)}, expected ${this.nextSeq}`);
    const expectedStart = this.inputMs;
    this.check(
      t_start_ms === null || t_start_ms === expectedStart || Math.abs(t_start_ms - expectedStart) <= 1e-7,
      `input media time is not sample-contiguous: t_start_ms ${t_start_ms}, expected ${expectedStart}`,
    );
    this.inputBytes += pcmByteLength(event.audio, 'audio');
    this.nextSeq++;
    this.inputTimes.push(time_s);
  }

  // ---- server events ----

  private serverEvent(event: WireEvent, time_s: number): void {
    const command = event.client_event_id === null ? undefined : this.sent.get(event.client_event_id);
    this.acknowledgement(event, command);
    switch (event.type) {
      case 'session.created':
        return this.sessionCreated(event);
      case 'session.updated':
        return this.sessionUpdated(event);
      case 'sglang.input_audio.accepted':
        return this.inputAccepted(event, command);
      case 'sglang.input_audio.ended':
        return this.inputEnded(event);
      case 'sglang.input_audio.drained':
        return this.inputDrained(event, time_s, command);
      case 'sglang.unit.done':
        return this.unitDone(event);
      case 'response.created':
        return this.responseCreated(event);
      case 'session.closed':
        return this.sessionClosed(event, time_s, command);
      case 'error':
        return this.serverError(event);
    }
    if (event.type.startsWith('response.')) this.responseEvent(event, time_s);
    else this.violations.push(`unsupported server event: ${event.type}`);
  }

  private acknowledgement(event: WireEvent, command: SentCommand | undefined): void {
    const acknowledges = ACKNOWLEDGES.get(event.type);
    if (acknowledges === undefined) return;
    this.check(
      command?.event.type === acknowledges,
      `${event.type}: missing matching prior client event (client_event_id ${show(event.client_event_id)})`,
    );
    const key = JSON.stringify([event.type, event.client_event_id]);
    this.check(!this.acknowledged.has(key), `duplicate ${event.type}`);
    this.acknowledged.add(key);
  }

  private sessionCreated(event: WireEvent): void {
    this.check(this.sessionId === null, 'duplicate session.created');
    this.sessionId = pyGet(event.session ?? {}, 'id');
    this.check(typeof this.sessionId === 'string' && this.sessionId.length > 0, 'missing session ID');
  }

  private sessionUpdated(event: WireEvent): void {
    const session = event.session ?? {};
    this.check(this.sessionId !== null && pyEqual(pyGet(session, 'id'), this.sessionId), 'session ID changed');
    const granted = dig(session, 'sglang', 'granted');
    this.check(isObject(granted), 'missing granted capabilities');
    if (isObject(granted)) this.checkGrant(granted);
    this.updated = true;
  }

  private checkGrant(granted: JsonObject): void {
    const required: ReadonlyArray<readonly [string, unknown]> = [
      ...REQUIRED_CAPABILITIES,
      ['native_unit_ms', this.unitMs],
      ['output_audio_format', { type: 'audio/pcm', rate: this.profile.output_sample_rate }],
    ];
    for (const [name, value] of required) {
      const asFloat = writtenAsFloat(granted, name);
      const actual = pyGet(granted, name);
      this.check(
        pyType(actual, asFloat) === pyType(value) && pyEqual(actual, value),
        `unsupported capability: ${name} (granted ${describe(actual, asFloat)}, required ${describe(value)})`,
      );
    }
    const modalities = pyGet(granted, 'output_modalities');
    this.check(
      Array.isArray(modalities) &&
        modalities.every((item) => typeof item === 'string') &&
        this.profile.output_modalities.every((item) => modalities.includes(item)),
      `unsupported capability: output_modalities (required ${this.profile.output_modalities.join(', ')})`,
    );
  }

  private inputAccepted(event: WireEvent, command: SentCommand | undefined): void {
    if (command === undefined) return;
    this.check(
      pyEqual(event.seq, command.event.sglang.seq),
      `accepted input sequence mismatch: seq ${show(event.seq)} for append seq ${show(command.event.sglang.seq)}`,
    );
    this.check(
      pyEqual(event.accepted_end_ms, command.input_end_ms),
      `accepted input duration mismatch: accepted_end_ms ${show(event.accepted_end_ms)}, sent ${command.input_end_ms}`,
    );
  }

  private inputEnded(event: WireEvent): void {
    this.check(
      pyEqual(event.accepted_end_ms, this.inputMs),
      `ended input duration mismatch: accepted_end_ms ${show(event.accepted_end_ms)}, sent ${this.inputMs}`,
    );
    this.check(event.tail_policy === 'pad', `ended tail policy mismatch: ${show(event.tail_policy)}`);
    this.ended = true;
  }

  private inputDrained(event: WireEvent, time_s: number, command: SentCommand | undefined): void {
    this.check(this.ended, 'input drained before ended receipt');
    const sentMs = this.inputMs;
    this.check(
      pyEqual(event.accepted_end_ms, sentMs),
      `drained input duration mismatch: accepted_end_ms ${show(event.accepted_end_ms)}, sent ${sentMs}`,
    );
    this.check(pyEqual(event.consumed_ms, sentMs), `drained consumed duration mismatch: consumed_ms ${show(event.consumed_ms)}, sent ${sentMs}`);
    this.check(pyEqual(event.discarded_ms, 0), `accepted input was discarded: discarded_ms ${show(event.discarded_ms)}`);
    const padding = Math.ceil(sentMs / this.unitMs) * this.unitMs - sentMs;
    this.check(pyEqual(event.padding_ms, padding), `drained padding mismatch: padding_ms ${show(event.padding_ms)}, expected ${padding}`);
    this.drained = true;
    if (command !== undefined) this.drainAfterEos = time_s - command.time_s;
  }

  private unitDone(event: WireEvent): void {
    const unitId = event.unit_id ?? '';
    const underscore = unitId.indexOf('_');
    const prefix = underscore < 0 ? unitId : unitId.slice(0, underscore);
    const index = underscore < 0 ? null : unitNumber(unitId.slice(underscore + 1));
    const media = event.sglang.media_time;
    if (prefix !== 'unit' || index === null) {
      this.violations.push(`invalid native unit ID: ${show(event.unit_id)}`);
      return;
    }
    if (media === null) {
      this.violations.push(`unit receipt missing media time (${unitId})`);
      return;
    }
    const last = this.units.at(-1);
    this.check(last === undefined || index > last.index, `native unit receipts are not increasing: ${unitId} after unit_${last?.index}`);
    const start = media.t_start_ms;
    this.check(
      Number.isInteger(start) && BigInt(start) === index * BigInt(this.unitMs),
      `native unit media time is not unit-aligned: ${unitId} starts at ${start} ms`,
    );
    this.units.push({ index, duration_ms: media.duration_ms });
  }

  private responseCreated(event: WireEvent): void {
    this.check(this.updated, 'response before session.updated');
    if (event.response === null) {
      this.violations.push('response.created missing response');
      return;
    }
    const { id, status } = event.response;
    this.check(!this.responses.has(id), `duplicate response.created: ${id}`);
    this.check(status === 'in_progress', `invalid created response status: ${status}`);
    this.responses.set(id, { terminal: null, reason: null, audioDone: false, audioSeen: false, itemId: null });
  }

  private responseEvent(event: WireEvent, time_s: number): void {
    const { type } = event;
    const closeRequested = this.count('send', 'session.close') > 0;
    this.check(!this.drained || (!MEDIA_DELTAS.has(type) && closeRequested), `${type} after drain`);
    const responseId = event.response !== null ? event.response.id : event.response_id;
    const state = responseId === null ? undefined : this.responses.get(responseId);
    this.check(state !== undefined, `${type}: unknown response ${show(responseId)}`);
    if (state === undefined) return;
    this.check(state.terminal === null, `${type}: output after response terminal`);
    switch (type) {
      case 'response.done':
        return this.responseDone(event, state);
      case 'response.output_audio.delta':
        return this.audioDelta(event, state, time_s);
      case 'response.output_audio.done':
        this.check(!state.audioDone, 'duplicate output_audio.done');
        state.audioDone = true;
        return;
      case 'response.output_audio_transcript.delta':
      case 'response.output_text.delta':
        return this.check(event.delta !== null, `${type}: text delta missing content`);
      case 'response.output_audio_transcript.done':
      case 'response.output_text.done':
        return;
      default:
        this.violations.push(`unsupported server event: ${type}`);
    }
  }

  private responseDone(event: WireEvent, state: ResponseState): void {
    const status = event.response?.status ?? null;
    const reason = event.response?.reason ?? null;
    const terminal = reason === null ? undefined : TERMINAL_REASONS.get(reason);
    this.check(terminal !== undefined, `unsupported response terminal reason: ${show(reason)}`);
    if (terminal !== undefined) {
      this.check(status === terminal.status, `terminal status ${show(status)} contradicts reason ${reason}`);
      // Only a profile whose response spans the session needs EOS before `stop`.
      if (reason !== 'stop' || this.profile.stop_requires_eos) {
        this.check(this.count('send', terminal.command) > 0, `terminal reason ${reason} without its client command`);
      }
    }
    // The server finishes its response on EOS before it reports the input drained.
    this.check(reason !== 'stop' || !this.drained, 'native completed terminal after the drain receipt');
    this.check(!state.audioSeen || state.audioDone, 'missing output_audio.done');
    state.terminal = status;
    state.reason = reason;
  }

  private audioDelta(event: WireEvent, state: ResponseState, time_s: number): void {
    this.check(!state.audioDone, 'audio after output_audio.done');
    this.check(event.item_id !== null, 'audio missing item ID');
    this.check(state.itemId === null || state.itemId === event.item_id, `audio item ID changed: ${show(event.item_id)} after ${state.itemId}`);
    this.check(
      pyEqual(event.content_index, 0) && pyEqual(event.output_index, 0),
      `invalid audio indexes: content_index ${show(event.content_index)}, output_index ${show(event.output_index)}`,
    );
    this.outputBytes += pcmByteLength(event.delta, 'delta');
    this.audioTimes.push(time_s);
    state.audioSeen = true;
    state.itemId = event.item_id;
  }

  private sessionClosed(event: WireEvent, time_s: number, command: SentCommand | undefined): void {
    this.check(this.drained, 'session.closed before input drained');
    this.check(event.reason === 'client_closed', `unexpected session close reason: ${show(event.reason)}`);
    this.closed = true;
    if (command !== undefined) this.closeAck = time_s - command.time_s;
  }

  private serverError(event: WireEvent): void {
    const error = event.error ?? {};
    const fatal = event.sglang.fatal;
    this.violations.push(`server error: code=${show(pyGet(error, 'code'))} fatal=${show(fatal)}: ${show(pyGet(error, 'message'))}`);
  }

  // ---- end of trace ----

  finish(): NativeCheckResult {
    for (const [direction, type] of ONCE_EACH) {
      const seen = this.count(direction, type);
      this.check(seen === 1, `expected exactly one ${direction} ${type}, saw ${seen}`);
    }
    this.check(this.inputTimes.length > 0, 'missing audio input');
    this.checkUnits();
    this.checkEndings();
    const overlap = this.inputOutputOverlap();
    const failed = this.violations.length > 0;
    return {
      status: failed ? 'fail' : !this.profile.continuous_output || overlap ? 'pass' : 'not_exercised',
      violations: this.violations,
      coverage: { input_output_overlap: overlap },
      metrics: this.metrics(overlap),
    };
  }

  private checkUnits(): void {
    const expectedUnits = Math.ceil(this.inputBytes / this.inputBytesPerUnit);
    const nonempty = this.units.filter((unit) => unit.duration_ms !== 0).length;
    this.check(
      this.units.every((unit, position) => unit.index === BigInt(position)),
      'native unit receipts are not contiguous from zero',
    );
    this.check(nonempty === expectedUnits, `expected ${expectedUnits} nonempty native units, observed ${nonempty}`);
    // Only input that ends on a unit boundary leaves the server an empty unit to report at EOS.
    const emptyEosUnit = this.units.length === nonempty + 1 && this.units.at(-1)?.duration_ms === 0 && this.inputBytes % this.inputBytesPerUnit === 0;
    this.check(this.units.length === nonempty || emptyEosUnit, 'an empty EOS unit requires exactly unit-aligned input');
    const unitMs = this.units.reduce((sum, unit) => sum + unit.duration_ms, 0);
    this.check(unitMs === this.inputMs, `native unit durations do not account for the accepted input: ${unitMs} of ${this.inputMs} ms`);
    if (this.profile.continuous_output) {
      const expectedBytes = Math.floor((expectedUnits * this.profile.output_sample_rate * this.unitMs) / 1000) * 2;
      this.check(
        this.outputBytes === expectedBytes,
        `output audio is not conserved: ${this.outputBytes} of ${expectedBytes} bytes for ${expectedUnits} units`,
      );
    }
  }

  private checkEndings(): void {
    for (const [eventId, command] of this.sent) {
      if (command.event.type !== 'input_audio_buffer.append') continue;
      this.check(this.acknowledged.has(JSON.stringify(['sglang.input_audio.accepted', eventId])), `missing input acceptance receipt for ${eventId}`);
    }
    for (const [id, state] of this.responses) {
      this.check(
        state.terminal === 'completed' && state.reason === 'stop',
        `response ${id} ended ${show(state.terminal)}/${show(state.reason)}, expected completed/stop`,
      );
    }
  }

  private inputOutputOverlap(): boolean {
    const first = this.audioTimes[0];
    const last = this.audioTimes.at(-1);
    return first !== undefined && last !== undefined && this.inputTimes.some((time) => first < time && time < last);
  }

  private metrics(overlap: boolean): NativeCheckMetrics {
    const audio = this.audioTimes;
    let gapMax: number | null = null;
    for (let i = 1; i < audio.length; i++) gapMax = Math.max(gapMax ?? -Infinity, audio[i] - audio[i - 1]);
    return {
      input_audio_s: this.inputBytes / INPUT_BYTES_PER_S,
      output_audio_s: this.outputBytes / (this.profile.output_sample_rate * 2),
      admission_denials: this.admissions,
      first_audio_packet_s: audio.length > 0 && this.inputTimes.length > 0 ? audio[0] - this.inputTimes[0] : null,
      audio_packet_gap_max_s: gapMax,
      input_output_overlap: overlap,
      drain_after_eos_s: this.drainAfterEos,
      close_ack_s: this.closeAck,
    };
  }
}
