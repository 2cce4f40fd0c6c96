import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTraces } from './check-traces';
import { checkLegacyTrace } from './legacy-rules';

// The cases follow sglang-omni's own tests of evaluate_legacy_trace
// (tests/unit_test/benchmarks/test_duplex_legacy.py at 7d89c7ef), so both tools are held to them.

type Event = Record<string, unknown>;
interface Line {
  direction: string;
  time_s: number;
  event: Event;
}

const silence = (samples: number) => Buffer.alloc(samples * 2).toString('base64');

/**
 * A healthy legacy session: configure, two appends, one turn answered (audio, text, done), the
 * probe 1 s after the input, and its answer. Times are 100 s plus the offset.
 */
function legacyTrace(): Line[] {
  const lines: Line[] = [];
  const session = { id: 'sess_a', modalities: ['text', 'audio'], turn_detection: { type: 'server_vad' } };
  const add = (t: number, direction: string, type: string, fields: Event = {}) => lines.push({ direction, time_s: 100 + t, event: { type, event_id: `e${lines.length}`, ...fields } });
  const part = (t: number, type: string, fields: Event = {}) => add(t, 'receive', type, { response_id: 'r0', item_id: 'a0', output_index: 0, content_index: type.includes('.audio.') ? 1 : 0, ...fields });
  add(0, 'receive', 'session.created', { session: { id: 'sess_a' } });
  add(0.01, 'send', 'session.update', { session: { modalities: ['text', 'audio'], turn_detection: { type: 'server_vad' } } });
  add(0.02, 'receive', 'session.updated', { session: { ...session } });
  add(0.1, 'send', 'input_audio_buffer.append', { audio: silence(1280), sglang: { seq: 0, t_start_ms: 0 } });
  add(0.11, 'receive', 'input_audio_buffer.speech_started', { audio_start_ms: 0, item_id: 'i0' });
  add(0.18, 'send', 'input_audio_buffer.append', { audio: silence(1280), sglang: { seq: 1, t_start_ms: 80 } });
  add(0.19, 'receive', 'input_audio_buffer.speech_stopped', { audio_end_ms: 160, item_id: 'i0' });
  add(0.191, 'receive', 'input_audio_buffer.committed', { item_id: 'i0' });
  add(0.2, 'receive', 'response.created', { response: { id: 'r0', status: 'in_progress' } });
  part(0.21, 'response.audio.delta', { delta: silence(2400) });
  part(0.22, 'response.text.delta', { delta: 'hi' });
  part(0.23, 'response.audio.done');
  part(0.235, 'response.text.done', { text: 'hi' });
  add(0.24, 'receive', 'response.done', { response: { id: 'r0', status: 'completed', status_details: { reason: 'stop' } } });
  add(1.26, 'send', 'session.update', { session: {} });
  add(1.27, 'receive', 'session.updated', { session: { ...session } });
  return lines;
}

const at = (lines: Line[], type: string): Event => {
  const found = lines.find((l) => l.event.type === type);
  if (!found) throw new Error(`no ${type}`);
  return found.event;
};
const violationsOf = (lines: Line[]) => checkLegacyTrace(lines).violations;

describe("sglang-omni's legacy oracle (evaluate_legacy_trace at 3d801fa0), rule for rule", () => {
  it('passes a healthy session and reports its figures as the oracle does', () => {
    const result = checkLegacyTrace(legacyTrace());
    expect(result.violations).toEqual([]);
    expect(result.status).toBe('pass');
    expect(result.coverage).toEqual({ input_output_overlap: false });
    expect(result.metrics).toEqual({
      input_audio_s: 0.16,
      output_audio_s: 0.1,
      admission_denials: 0,
      first_audio_packet_s: expect.closeTo(0.11, 9),
      audio_packet_gap_max_s: null,
      input_output_overlap: false,
      probe_ack_s: expect.closeTo(0.01, 9),
      responses_created: 1,
      responses_overlapped_by_speech: 0,
      responses_open_at_close: 0,
    });
  });

  it.each([
    ['response.audio.delta', 'content_index', 0, 'invalid audio indexes'],
    ['response.audio.delta', 'response_id', 'foreign', 'unknown response'],
    ['response.audio.delta', 'delta', 'AA==', 'whole nonempty samples'],
    ['response.audio.delta', 'item_id', null, 'audio missing item ID'],
    ['response.done', 'response', { id: 'r0', status: 'cancelled', status_details: { reason: 'client_cancelled' } }, 'unsupported response terminal cancelled/client_cancelled'],
    ['response.done', 'response', { id: 'r0', status: 'failed', status_details: { reason: 'error' } }, 'unsupported response terminal failed/error'],
    ['session.updated', 'session', { id: 'sess_a', modalities: ['text'], turn_detection: { type: 'server_vad' } }, 'does not grant audio output'],
    ['session.updated', 'session', { id: 'sess_a', modalities: ['text', 'audio'], turn_detection: { type: 'semantic_vad' } }, "'semantic_vad' does not echo the requested 'server_vad'"],
    ['session.updated', 'session', { id: 'sess_a', modalities: ['text', 'audio'] }, "None does not echo the requested 'server_vad'"],
    ['session.updated', 'session', { id: 'sess_b' }, 'session ID changed'],
    ['input_audio_buffer.append', 'sglang', { seq: 1 }, 'sequence is not contiguous'],
    ['session.update', 'session', { modalities: ['text'], turn_detection: { type: 'server_vad' } }, 'configure update does not request audio output'],
  ])('fails a trace whose %s has %s %j: %s', (type, key, value, violation) => {
    const lines = legacyTrace();
    at(lines, type)[key] = value;
    const result = checkLegacyTrace(lines);
    expect(result.status).toBe('fail');
    expect(result.violations.some((v) => v.includes(violation))).toBe(true);
  });

  it.each([
    ['session.created', 'expected exactly one receive session.created'],
    ['session.updated', 'expected exactly two receive session.updated'],
    ['input_audio_buffer.append', 'missing audio input'],
  ])('fails a trace without its %s', (type, violation) => {
    expect(violationsOf(legacyTrace().filter((l) => l.event.type !== type))).toContain(violation);
  });

  it('wants the probe after the input, a no-op, and answered; and no session.updated without an update', () => {
    const unprobed = legacyTrace().slice(0, -2);
    expect(violationsOf(unprobed)).toEqual(expect.arrayContaining(['expected exactly two send session.update', 'expected exactly two receive session.updated']));
    const late = legacyTrace();
    late.filter((l) => l.event.type === 'input_audio_buffer.append')[1].time_s = 101.265;
    late.sort((a, b) => a.time_s - b.time_s);
    expect(violationsOf(late)).toContain('input after the liveness probe');
    const notNoop = legacyTrace();
    (notNoop.at(-2) as Line).event.session = { modalities: ['text', 'audio'] };
    expect(violationsOf(notNoop).some((v) => v.startsWith('liveness probe is not a no-op session.update'))).toBe(true);
    const stray = legacyTrace();
    stray.splice(3, 0, { direction: 'receive', time_s: 100.03, event: { type: 'session.updated', event_id: 'stray', session: { id: 'sess_a', modalities: ['text', 'audio'] } } });
    expect(violationsOf(stray)).toContain('session.updated without a pending session.update');
  });

  it.each([
    ['sglang.input_audio.accepted', 'unsupported server event'],
    ['sglang.unit.done', 'unsupported server event'],
    ['session.closed', 'unsupported server event'],
    ['input_audio_buffer.cleared', 'server discarded buffered input'],
    ['error', 'server error: code=not_supported fatal=False: nope'],
  ])("refuses the native dialect's receipts, server closes and errors: %s", (type, violation) => {
    const lines = legacyTrace();
    lines.splice(4, 0, { direction: 'receive', time_s: 100.105, event: { type, event_id: 'foreign', sglang: { fatal: false }, error: { code: 'not_supported', message: 'nope' } } });
    expect(violationsOf(lines).some((v) => v.includes(violation))).toBe(true);
  });

  it('takes a turn_detected cancel only after a speech_started that found the response open', () => {
    const lines = legacyTrace();
    at(lines, 'response.done').response = { id: 'r0', status: 'cancelled', status_details: { reason: 'turn_detected' } };
    expect(violationsOf(lines)).toContain('response r0 cancelled by turn detection without a preceding speech_started');
    lines.splice(10, 0, { direction: 'receive', time_s: 100.215, event: { type: 'input_audio_buffer.speech_started', event_id: 'barge', audio_start_ms: 120, item_id: 'i1' } });
    lines.splice(11, 0, { direction: 'receive', time_s: 100.216, event: { type: 'output_audio_buffer.cleared', event_id: 'cleared', response_id: 'r0', item_id: 'a0' } });
    const interrupted = checkLegacyTrace(lines);
    expect(interrupted.violations).toEqual([]);
    expect(interrupted.metrics.responses_overlapped_by_speech).toBe(1);
  });

  it('takes a length finish, and responses still open at the close', () => {
    const length = legacyTrace();
    (at(length, 'response.done').response as Event).status_details = { reason: 'length' };
    expect(checkLegacyTrace(length).status).toBe('pass');
    const open = checkLegacyTrace(legacyTrace().filter((l) => l.event.type !== 'response.done'));
    expect(open.violations).toEqual([]);
    expect(open.metrics.responses_open_at_close).toBe(1);
  });

  it("fails a completed response that never said its audio was done, and a client's own error line", () => {
    expect(violationsOf(legacyTrace().filter((l) => l.event.type !== 'response.audio.done'))).toContain('missing audio.done');
    const ended = [...legacyTrace(), { direction: 'error', time_s: 102, event: { message: 'drain_timeout: no session.updated answered the liveness probe' } }];
    expect(violationsOf(ended)).toContain('client error: drain_timeout: no session.updated answered the liveness probe');
  });

  it("counts admissions up from one, within the run's recorded limit", () => {
    const denied = (attempt: number): Line => ({ direction: 'admission', time_s: 99, event: { type: 'connection_denied', http_status: 503, attempt } });
    expect(checkLegacyTrace([denied(1), denied(2), ...legacyTrace()]).metrics.admission_denials).toBe(2);
    expect(violationsOf([denied(2), ...legacyTrace()])).toContain('admission attempts are not contiguous from one: attempt 2 after 0');
    expect(checkLegacyTrace([denied(1), denied(2), ...legacyTrace()], { max_admission_attempts: 1 }).violations).toContain('admission attempt 2 exceeds the recorded limit 1');
  });

  it("grades a run that spoke sglang-legacy (its run.json says so) by these rules, with the run's admission limit", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'legacy-check-'));
    await writeFile(join(dir, 'run.json'), JSON.stringify({ command: [], protocol: 'sglang-legacy', dialect: { max_admission_attempts: 0 } }));
    const trace = async (id: string, lines: Line[]) => {
      await mkdir(join(dir, 'sessions', id), { recursive: true });
      const file = join(dir, 'sessions', id, 'trace.jsonl');
      await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
      return file;
    };
    const good = await trace('s0', legacyTrace());
    const refused = await trace('s1', [{ direction: 'admission', time_s: 99, event: { type: 'connection_denied', http_status: 503, attempt: 1 } }, ...legacyTrace()]);
    const report = await checkTraces([good, refused], undefined, 'sglang-legacy');
    expect(report).toMatchObject({ protocol: 'sglang-legacy', sessions: 2, pass: 1, fail: 1, not_graded: 0 });
    expect(report.contract).toMatch(/evaluate_legacy_trace/);
    expect(report.results[1].violations).toEqual(['admission attempt 1 exceeds the recorded limit 0']);
    expect(report.results[0].metrics).toMatchObject({ probe_ack_s: expect.closeTo(0.01, 9), responses_created: 1 });
  });
});
