import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTraceFile, checkTraces, runProtocol, traceFiles } from './check-traces';
import { ConformanceError } from './errors';
import { eventOf, grantOf, MINICPMO, nativeTrace, toJsonl } from './native/native-trace.spec-helpers';

const send = (event: Record<string, unknown>) => ({ direction: 'send', time_s: 0, event });
const receive = (event: Record<string, unknown>) => ({ direction: 'receive', time_s: 0, event });

/** An OpenAI session as the dialect's rules pass it: the server first, one response.create per response. */
const openaiTrace = () => [receive({ type: 'session.created', session: {} }), send({ type: 'response.create' }), receive({ type: 'response.created', response: { id: 'a' } }), receive({ type: 'response.done', response: { id: 'a' } })];

describe('a run checked against its contract', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'check-traces-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes `text` as a session's trace.jsonl and returns its path. */
  async function trace(id: string, text: string): Promise<string> {
    await mkdir(join(dir, 'sessions', id), { recursive: true });
    const file = join(dir, 'sessions', id, 'trace.jsonl');
    await writeFile(file, text);
    return file;
  }
  const caught = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);

  describe('traceFiles', () => {
    it("lists each session's trace.jsonl sorted by session id, passing over sessions that kept none", async () => {
      const b = await trace('s10', '');
      const a = await trace('s0', '');
      await mkdir(join(dir, 'sessions', 's5'));
      await writeFile(join(dir, 'sessions', 's5', 'input-send-receipts.json'), '{}');
      await mkdir(join(dir, 'sessions', 's7', 'trace.jsonl'), { recursive: true });
      expect(await traceFiles(dir)).toEqual([a, b]);
    });

    it('takes a file given as the one trace', async () => {
      const file = await trace('s0', '');
      expect(await traceFiles(file)).toEqual([file]);
    });

    it('names what it cannot grade: no such path, no sessions/ directory, no trace in it', async () => {
      const missing = join(dir, 'nothing');
      const none = await caught(traceFiles(missing));
      expect(none).toBeInstanceOf(ConformanceError);
      expect(none).toMatchObject({ name: 'ConformanceError', code: 'NO_SUCH_PATH', path: missing });
      expect(await caught(traceFiles(dir))).toMatchObject({ code: 'NO_SESSIONS_DIR', path: dir });
      await mkdir(join(dir, 'sessions', 's0'), { recursive: true });
      expect(await caught(traceFiles(dir))).toMatchObject({ code: 'NO_TRACES', path: dir, message: expect.stringContaining('--trace full --keep-traces') });
    });
  });

  describe('runProtocol', () => {
    it("reads the protocol from the run's run.json, for the run directory or a trace file in it", async () => {
      await writeFile(join(dir, 'run.json'), JSON.stringify({ protocol: 'vllm-omni' }));
      expect(await runProtocol(dir, false)).toBe('vllm-omni');
      expect(await runProtocol(await trace('s0', ''), true)).toBe('vllm-omni');
    });

    it('is null without a run.json, or when it states no protocol', async () => {
      expect(await runProtocol(dir, false)).toBeNull();
      await writeFile(join(dir, 'run.json'), JSON.stringify({ protocol: 3 }));
      expect(await runProtocol(dir, false)).toBeNull();
    });

    it("names a run.json cut short, with the parser's place, for the run directory or a trace file in it", async () => {
      const path = join(dir, 'run.json');
      await writeFile(path, '{"protocol": "vllm-om');
      const named = new RegExp(`^${path}: not valid JSON \\(.+\\); the file may be cut short$`);
      expect(((await caught(runProtocol(dir, false))) as Error).message).toMatch(named);
      expect(((await caught(runProtocol(await trace('s0', ''), true))) as Error).message).toMatch(named);
    });
  });

  describe('checkTraceFile', () => {
    it('grades a native trace by the profile its grant states', async () => {
      const result = await checkTraceFile(await trace('s0', toJsonl(nativeTrace())));
      expect(result).toMatchObject({ status: 'pass', violations: [], profile: 'nemotron', profile_source: 'grant', coverage: { input_output_overlap: true } });
    });

    it('grades by --profile when given, whatever the grant states', async () => {
      const result = await checkTraceFile(await trace('s0', toJsonl(nativeTrace())), 'minicpmo');
      expect(result).toMatchObject({ status: 'fail', profile: 'minicpmo', profile_source: '--profile' });
      expect((await checkTraceFile(await trace('s1', toJsonl(nativeTrace(MINICPMO))), 'minicpmo')).status).toBe('pass');
    });

    it('fails a trace whose grant states no known profile, and says to give one', async () => {
      const t = nativeTrace();
      grantOf(t).native_unit_ms = 40;
      const result = await checkTraceFile(await trace('s0', toJsonl(t)));
      expect(result).toMatchObject({ status: 'fail', profile: null, profile_source: 'none' });
      expect(result.violations[0]).toBe('the grant states no known profile (native_unit_ms and output_audio_format.rate); give --profile');
    });

    it("holds a native trace's admission attempts to the limit its run recorded, and to none without a run.json", async () => {
      const denied = (attempt: number) => ({ direction: 'admission', time_s: 99, event: { type: 'connection_denied', http_status: 503, attempt } });
      const text = toJsonl([denied(1), denied(2), ...nativeTrace()]);
      expect((await checkTraceFile(await trace('s0', text))).status).toBe('pass');
      await writeFile(join(dir, 'run.json'), JSON.stringify({ command: [], protocol: 'native', dialect: { max_admission_attempts: 1 } }));
      const result = await checkTraceFile(await trace('s1', text));
      expect(result).toMatchObject({ status: 'fail', violations: ['admission attempt 2 exceeds the recorded limit 1'] });
    });

    it('says first when the trace kept audio as byte counts (--trace events), which the contract cannot check', async () => {
      const t = nativeTrace();
      eventOf(t, 'input_audio_buffer.append').audio = 2560;
      const result = await checkTraceFile(await trace('s0', toJsonl(t)));
      expect(result.status).toBe('fail');
      expect(result.violations[0]).toBe('audio payloads were replaced by their byte counts (--trace events); record with --trace full to check');
    });
  });

  describe('checkTraces', () => {
    it('grades native traces by the oracle and counts each outcome', async () => {
      const broken = nativeTrace().filter((r) => r.event.type !== 'session.closed');
      const files = [await trace('s0', toJsonl(nativeTrace())), await trace('s1', toJsonl(broken))];
      const report = await checkTraces(files);
      expect(report).toMatchObject({ protocol: 'native', sessions: 2, pass: 1, fail: 1, not_exercised: 0, not_graded: 0 });
      expect(report.contract).toMatch(/^native dialect, sglang-omni duplex/);
      expect(report.results.map((r) => [r.trace, r.status])).toEqual([
        [files[0], 'pass'],
        [files[1], 'fail'],
      ]);
    });

    it("grades an openai or vllm-omni run by its flow's rules, an unreadable line a violation", async () => {
      const good = await trace('s0', toJsonl(openaiTrace()));
      const torn = await trace('s1', `${toJsonl(openaiTrace())}{"direction":"receive",`);
      const report = await checkTraces([good, torn], undefined, 'openai');
      expect(report).toMatchObject({ protocol: 'openai', sessions: 2, pass: 1, fail: 1 });
      expect(report.contract).toMatch(/^OpenAI Realtime flow/);
      expect(report.results[0]).toMatchObject({ status: 'pass', violations: [], profile: null, profile_source: 'none', metrics: { response_creates: 1 } });
      expect(report.results[1].violations).toEqual([expect.stringMatching(/^unreadable line: line 5 is not JSON/)]);
      // The same OpenAI trace by vLLM-Omni's rules: the client did not speak first.
      expect(await checkTraces([good], undefined, 'vllm-omni')).toMatchObject({ protocol: 'vllm-omni', fail: 1, pass: 0 });
    });

    it('grades no trace of a protocol with no rules written, and says so', async () => {
      const report = await checkTraces([await trace('s0', toJsonl(openaiTrace()))], undefined, 'moshi');
      expect(report).toMatchObject({ contract: 'protocol moshi: no rules written; not graded', sessions: 1, pass: 0, fail: 0, not_graded: 1 });
      expect(report.results[0]).toMatchObject({ status: 'not_graded', violations: ['no rules are written for protocol moshi'] });
    });
  });
});
