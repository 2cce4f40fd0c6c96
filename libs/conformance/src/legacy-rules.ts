/**
 * Grades one session of sglang-omni's legacy (turn-based) protocol as their oracle does
 * (`evaluate_legacy_trace` in benchmarks/duplex/oracle.py at 3d801fa0, records read by the schema of
 * oracle_models.py): the rules and the figures are theirs, this code and its wording ours, the
 * rule phrases kept close to theirs so the two reports read alike. Records are read by the same
 * strict schema the native oracle uses here (trace-records.ts), and a record that fails to read
 * ends its own step part-way, as their loop stops a record at its first exception.
 *
 * The facade acknowledges `session.update` only, so the n-th `session.updated` answers the n-th
 * update: the first must echo the `turn_detection.type` asked for and grant audio, and the second
 * answers the liveness probe (a no-op update after the input). Responses still open when the client
 * closes are no fault; one may end `cancelled` by `turn_detected` only after a `speech_started`
 * came while it was open.
 */
import { LEGACY_PROFILES, NATIVE_INPUT_BYTES_PER_MS, type LegacyProfile } from '@duplex-bench/protocol';
import { StrictFields } from './native/strict-fields';
import { describe, isObject, pyEqual, pyGet, show, type JsonObject } from './native/python-values';
import { pcmByteLength, readTraceRecord, readWireEvent, RecordError, type WireEvent } from './native/trace-records';

export interface LegacyCheckMetrics {
  input_audio_s: number;
  output_audio_s: number;
  admission_denials: number;
  first_audio_packet_s: number | null;
  audio_packet_gap_max_s: number | null;
  input_output_overlap: boolean;
  probe_ack_s: number | null;
  responses_created: number;
  responses_overlapped_by_speech: number;
  responses_open_at_close: number;
}

export interface LegacyCheckResult {
  status: 'pass' | 'fail';
  violations: string[];
  coverage: { input_output_overlap: boolean };
  metrics: LegacyCheckMetrics;
}

export interface LegacyCheckOptions {
  /** The retry limit the recording client used (run.json `max_admission_attempts`); absent: attempts need only count up from one. */
  max_admission_attempts?: number;
  /** Lines of the trace file that could not be read; each fails the trace. */
  line_errors?: readonly string[];
}

/** Completed responses carry the generation's finish reason. */
const TERMINALS: ReadonlyArray<readonly [string, string]> = [
  ['completed', 'stop'],
  ['completed', 'length'],
];
/** A response the server cut because the user spoke over it. */
const INTERRUPTED: readonly [string, string] = ['cancelled', 'turn_detected'];

/** Server events the oracle takes as observations: seen, not graded. */
const OBSERVATIONS: ReadonlySet<string> = new Set([
  'input_audio_buffer.speech_stopped',
  'input_audio_buffer.committed',
  'conversation.item.input_audio_transcription.delta',
  'conversation.item.input_audio_transcription.completed',
  'conversation.item.truncated',
]);

interface ResponseState {
  terminal: string | null;
  audioDone: boolean;
  audioSeen: boolean;
  itemId: string | null;
}

/** A value as Python's `repr` shows a string, None or a bool in the oracle's messages. */
function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return describe(value);
}

/** A value as the oracle's f-strings print it (`str`): None, True and False by their Python names. */
function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** `session` of an event, or `{}` where it has none (the oracle's `event.session or {}`). */
function sessionOf(event: WireEvent): JsonObject {
  return event.session ?? {};
}

/** `turn_detection.type` of a session object, or null (the oracle's `turn.get("type") if isinstance(turn, dict) else None`). */
function turnType(session: JsonObject): unknown {
  const turn = pyGet(session, 'turn_detection');
  return isObject(turn) ? pyGet(turn, 'type') : null;
}

function grantsAudio(session: JsonObject): boolean {
  const modalities = pyGet(session, 'modalities');
  return Array.isArray(modalities) && modalities.some((m) => m === 'audio');
}

/** One legacy session's trace replayed record by record, as the oracle's loop keeps its state. */
export class LegacyReplay {
  readonly violations: string[] = [];
  private readonly counts = new Map<string, number>();
  private readonly eventIds = { send: new Set<string>(), receive: new Set<string>() };
  private readonly responses = new Map<string, ResponseState>();
  /** Responses a `speech_started` found open. */
  private readonly interrupted = new Set<string>();
  private readonly inputTimes: number[] = [];
  private readonly audioTimes: number[] = [];
  private inputBytes = 0;
  private outputBytes = 0;
  private nextSeq = 0;
  private admissions = 0;
  private updatesSent = 0;
  private updatesAcknowledged = 0;
  /** session.created's `session.id`, any JSON value; null is Python's None. */
  private sessionId: unknown = null;
  private requestedType: unknown = null;
  private probeSentS: number | null = null;
  private probeAckS: number | null = null;
  private previousTime = -Infinity;

  constructor(
    private readonly profile: LegacyProfile,
    private readonly max_admission_attempts?: number,
  ) {}

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

  /** At 3d801fa0 an admission record's attempt has no ceiling of its own: the run's recorded limit, when given, is it. */
  private admission(event: JsonObject): void {
    const problems: string[] = [];
    const fields = new StrictFields(event, 'admission ', problems);
    fields.onlyKeys(['type', 'http_status', 'attempt']);
    fields.literal('type', ['connection_denied']);
    fields.literal('http_status', [503]);
    const attempt = fields.int('attempt', 'required', 1);
    if (problems.length > 0) throw new RecordError(problems.join('; '));
    const n = Number(attempt);
    this.check(this.eventIds.send.size === 0 && this.eventIds.receive.size === 0, 'admission diagnostic after the session started');
    this.check(n === this.admissions + 1, `admission attempts are not contiguous from one: attempt ${n} after ${this.admissions}`);
    const limit = this.max_admission_attempts;
    this.check(limit === undefined || n <= limit, `admission attempt ${n} exceeds the recorded limit ${limit}`);
    this.admissions++;
  }

  private wireEvent(direction: 'send' | 'receive', event: WireEvent, time_s: number): void {
    const ids = this.eventIds[direction];
    this.check(!ids.has(event.event_id), `duplicate ${direction} event_id: ${event.event_id}`);
    ids.add(event.event_id);
    this.counts.set(`${direction} ${event.type}`, this.count(direction, event.type) + 1);
    if (direction === 'send') this.clientCommand(event, time_s);
    else this.serverEvent(event, time_s);
  }

  // ---- client commands ----

  private clientCommand(event: WireEvent, time_s: number): void {
    switch (event.type) {
      case 'session.update':
        return this.sessionUpdate(event, time_s);
      case 'input_audio_buffer.append':
        return this.append(event, time_s);
      default:
        this.violations.push(`client command outside this scenario: ${event.type}`);
    }
  }

  /** The first update configures the session; every later one must be the no-op liveness probe, after the input. */
  private sessionUpdate(event: WireEvent, time_s: number): void {
    this.check(this.sessionId !== null, 'session.update before session.created');
    const session = sessionOf(event);
    if (this.updatesSent === 0) {
      this.requestedType = turnType(session);
      this.check(typeof this.requestedType === 'string', 'configure update lacks turn_detection.type');
      this.check(grantsAudio(session), 'configure update does not request audio output');
    } else {
      this.check(Object.keys(session).length === 0, `liveness probe is not a no-op session.update: session ${describe(session)}`);
      this.check(this.inputTimes.length > 0, 'liveness probe before audio input');
      this.probeSentS = time_s;
    }
    this.updatesSent++;
  }

  private append(event: WireEvent, time_s: number): void {
    const { seq, t_start_ms } = event.sglang;
    this.check(this.updatesAcknowledged > 0, 'audio input before session.updated');
    this.check(this.probeSentS === null, 'input after the liveness probe');
    this.check(pyEqual(seq, this.nextSeq), `input sequence is not contiguous: seq ${show(seq)}, expected ${this.nextSeq}`);
    const expectedStart = this.inputBytes / NATIVE_INPUT_BYTES_PER_MS;
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
    const { type } = event;
    if (type === 'session.created') return this.sessionCreated(event);
    if (type === 'session.updated') return this.sessionUpdated(event, time_s);
    if (type === 'input_audio_buffer.speech_started') {
      for (const [id, state] of this.responses) if (state.terminal === null) this.interrupted.add(id);
      return;
    }
    if (OBSERVATIONS.has(type)) return;
    if (type === 'output_audio_buffer.cleared') {
      this.check(event.response_id !== null && this.responses.has(event.response_id), `output_audio_buffer.cleared: unknown response ${show(event.response_id)}`);
      return;
    }
    if (type === 'input_audio_buffer.cleared') {
      this.violations.push('server discarded buffered input');
      return;
    }
    if (type === 'response.created') return this.responseCreated(event);
    if (type.startsWith('response.')) return this.responseEvent(event, time_s);
    if (type === 'error') {
      const error = event.error ?? {};
      this.violations.push(`server error: code=${pyStr(pyGet(error, 'code'))} fatal=${pyStr(event.sglang.fatal)}: ${pyStr(pyGet(error, 'message'))}`);
      return;
    }
    this.violations.push(`unsupported server event: ${type}`);
  }

  private sessionCreated(event: WireEvent): void {
    this.check(this.sessionId === null, 'duplicate session.created');
    this.sessionId = pyGet(sessionOf(event), 'id');
    this.check(typeof this.sessionId === 'string' && this.sessionId.length > 0, 'missing session ID');
  }

  private sessionUpdated(event: WireEvent, time_s: number): void {
    const session = sessionOf(event);
    this.check(this.sessionId !== null && pyEqual(pyGet(session, 'id'), this.sessionId), 'session ID changed');
    this.check(this.updatesAcknowledged < this.updatesSent, 'session.updated without a pending session.update');
    this.updatesAcknowledged++;
    if (this.updatesAcknowledged === 1) {
      const echoed = turnType(session);
      this.check(pyEqual(echoed, this.requestedType), `turn_detection.type ${pyRepr(echoed)} does not echo the requested ${pyRepr(this.requestedType)}`);
      this.check(grantsAudio(session), 'session.updated does not grant audio output');
    } else if (this.probeSentS !== null) {
      this.probeAckS = time_s - this.probeSentS;
    }
  }

  private responseCreated(event: WireEvent): void {
    this.check(this.updatesAcknowledged > 0, 'response before session.updated');
    if (event.response === null) {
      this.violations.push('response.created missing response');
      return;
    }
    const { id, status } = event.response;
    this.check(!this.responses.has(id), `duplicate response.created: ${id}`);
    this.check(status === 'in_progress', `invalid created response status: ${status}`);
    this.responses.set(id, { terminal: null, audioDone: false, audioSeen: false, itemId: null });
  }

  private responseEvent(event: WireEvent, time_s: number): void {
    const { type } = event;
    const responseId = event.response !== null ? event.response.id : event.response_id;
    const state = responseId === null ? undefined : this.responses.get(responseId);
    this.check(state !== undefined, `${type}: unknown response ${show(responseId)}`);
    if (state === undefined) return;
    this.check(state.terminal === null, `${type}: output after response terminal`);
    switch (type) {
      case 'response.done':
        return this.responseDone(event, responseId as string, state);
      case 'response.audio.delta':
        return this.audioDelta(event, state, time_s);
      case 'response.audio.done':
        this.check(!state.audioDone, 'duplicate audio.done');
        state.audioDone = true;
        return;
      case 'response.text.delta':
        return this.check(event.delta !== null, 'text delta missing content');
      case 'response.text.done':
        return;
      default:
        this.violations.push(`unsupported server event: ${type}`);
    }
  }

  private responseDone(event: WireEvent, responseId: string, state: ResponseState): void {
    const status = event.response?.status ?? null;
    const reason = event.response?.reason ?? null;
    if (status === INTERRUPTED[0] && reason === INTERRUPTED[1]) {
      this.check(this.interrupted.has(responseId), `response ${responseId} cancelled by turn detection without a preceding speech_started`);
    } else {
      this.check(
        TERMINALS.some(([s, r]) => s === status && r === reason),
        `unsupported response terminal ${pyStr(status)}/${pyStr(reason)}`,
      );
    }
    this.check(status !== 'completed' || !state.audioSeen || state.audioDone, 'missing audio.done');
    state.terminal = status;
  }

  private audioDelta(event: WireEvent, state: ResponseState, time_s: number): void {
    this.check(!state.audioDone, 'audio after audio.done');
    this.check(event.item_id !== null, 'audio missing item ID');
    this.check(state.itemId === null || state.itemId === event.item_id, `audio item ID changed: ${show(event.item_id)} after ${state.itemId}`);
    this.check(
      pyEqual(event.content_index, 1) && pyEqual(event.output_index, 0),
      `invalid audio indexes: content_index ${show(event.content_index)}, output_index ${show(event.output_index)} (content_index 1, output_index 0 required)`,
    );
    this.outputBytes += pcmByteLength(event.delta, 'delta');
    this.audioTimes.push(time_s);
    state.audioSeen = true;
    state.itemId = event.item_id;
  }

  // ---- the verdict ----

  finish(): LegacyCheckResult {
    this.check(this.count('receive', 'session.created') === 1, 'expected exactly one receive session.created');
    this.check(this.count('send', 'session.update') === 2, 'expected exactly two send session.update');
    this.check(this.count('receive', 'session.updated') === 2, 'expected exactly two receive session.updated');
    this.check(this.inputTimes.length > 0, 'missing audio input');
    const audio = this.audioTimes;
    const overlap = audio.length > 0 && this.inputTimes.some((t) => audio[0] < t && t < (audio.at(-1) as number));
    let gapMax: number | null = null;
    for (let i = 1; i < audio.length; i++) gapMax = Math.max(gapMax ?? -Infinity, audio[i] - audio[i - 1]);
    return {
      status: this.violations.length > 0 ? 'fail' : 'pass',
      violations: this.violations,
      coverage: { input_output_overlap: overlap },
      metrics: {
        input_audio_s: this.inputBytes / (NATIVE_INPUT_BYTES_PER_MS * 1000),
        output_audio_s: this.outputBytes / (this.profile.output_sample_rate * 2),
        admission_denials: this.admissions,
        first_audio_packet_s: audio.length > 0 && this.inputTimes.length > 0 ? audio[0] - this.inputTimes[0] : null,
        audio_packet_gap_max_s: gapMax,
        input_output_overlap: overlap,
        probe_ack_s: this.probeAckS,
        responses_created: this.responses.size,
        responses_overlapped_by_speech: this.interrupted.size,
        responses_open_at_close: [...this.responses.values()].filter((r) => r.terminal === null).length,
      },
    };
  }
}

/** Grades one legacy session's trace records (parsed JSON lines, in file order) as `evaluate_legacy_trace` does. */
export function checkLegacyTrace(records: readonly unknown[], options: LegacyCheckOptions = {}, profile: LegacyProfile = LEGACY_PROFILES['qwen3-omni-half-duplex']): LegacyCheckResult {
  const replay = new LegacyReplay(profile, options.max_admission_attempts);
  replay.violations.push(...(options.line_errors ?? []));
  records.forEach((record, index) => replay.record(record, index));
  return replay.finish();
}
