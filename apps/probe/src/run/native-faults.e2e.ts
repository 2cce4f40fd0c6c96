import { EventEmitter } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer } from '@duplex-bench/mock-servers';
import { startFaultyMock, type MockFault } from '@duplex-bench/mock-servers/testing';
import { probe } from './run-harness.spec-helpers';
import { runCommand } from './run-command';
import { parseRunOptions } from './run-options';

jest.setTimeout(60_000);

interface TraceLine {
  direction: 'send' | 'receive' | 'error' | 'admission';
  time_s: number;
  event: Record<string, unknown>;
}

async function traceOf(dir: string, id: string): Promise<TraceLine[]> {
  const text = await readFile(join(dir, 'sessions', id, 'trace.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TraceLine);
}

const sent = (trace: TraceLine[]) => trace.filter((l) => l.direction === 'send').map((l) => l.event.type);
const received = (trace: TraceLine[]) => trace.filter((l) => l.direction === 'receive').map((l) => l.event.type);

/**
 * Every fault a real server can show ends the session in bounded time, with the right reason, and
 * the cause on disk as an `error` record (the last line of the trace). sglang-omni's own client
 * stops streaming on ANY server error and closes with a close frame, never dropping the socket
 * while the server may still answer.
 */
describe('probe run (native) against a server that misbehaves', () => {
  const FLAGS = ['--concurrency', '2', '--duration', '0.8', '--trace', 'full', '--keep-traces', '--drain-timeout-s', '0.5'];

  // Two real-socket smoke cases against the faulty mock; every fault's session behaviour (errors fatal
  // or not, silence, malformed frames, non-finite numbers, drops, a close in the handshake) is specced
  // in virtual time in libs/session/src/native-session.spec.ts.
  const cases: Array<{ name: string; fault: MockFault; reason: string; message: RegExp; sends: string[]; receives?: string[] }> = [
    {
      name: 'a fatal error at once',
      fault: { after_appends: 0, action: 'fatal_error' },
      reason: 'server_error',
      message: /injected_fault.*fatal/,
      sends: ['session.update'],
      receives: ['session.created', 'session.updated', 'error', 'session.closed'],
    },
    { name: 'malformed JSON', fault: { after_appends: 3, action: 'malformed_frame' }, reason: 'malformed_frame', message: /malformed server frame '\{"type":"sglang\.input_audio\.accepted","seq":'/, sends: [] },
  ];

  it.each(cases)('ends on $name in bounded time as $reason, with the cause in the trace', async ({ fault, reason, message, sends, receives }) => {
    const server = await startFaultyMock(fault);
    try {
      const started = performance.now();
      const { code, summary, dir, stdout } = await probe(server.url, FLAGS);
      // 0.8 s of input, a 0.5 s drain bound, a 2 s close bound (dropped sockets) and start-up.
      expect(performance.now() - started).toBeLessThan(6000);
      expect(summary.sessions).toMatchObject({ started: 2, completed: 0, incomplete: 2, incomplete_reasons: { [reason]: 2 } });
      expect(code).toBe(1);
      for (const id of ['s0', 's1']) {
        const trace = await traceOf(dir, id);
        const last = trace.at(-1) as TraceLine;
        expect(last.direction).toBe('error');
        expect(String(last.event.message)).toMatch(new RegExp(`^${reason}: `));
        expect(String(last.event.message)).toMatch(message);
        if (sends.length > 0) expect(sent(trace)).toEqual(sends);
        if (receives) expect(received(trace)).toEqual(receives);
        // The trace's clock never goes back.
        for (let i = 1; i < trace.length; i++) expect(trace[i].time_s).toBeGreaterThanOrEqual(trace[i - 1].time_s);
      }
      if (reason === 'server_error') expect(summary.events.server_error_codes).toEqual({ [fault.action === 'refuse_appends' ? 'input_rejected' : 'injected_fault']: 2 });
      expect(stdout).not.toMatch(/missed its cadence/);
    } finally {
      await server.close();
    }
  });

  it('after a non-fatal error, waits for session.closed and closes with a close frame: the server counts the session closed, and the summary names the code', async () => {
    const server = await startFaultyMock({ after_appends: 1, action: 'refuse_appends' });
    try {
      const { summary, dir, stdout } = await probe(server.url, FLAGS);
      const trace = await traceOf(dir, 's0');
      expect(received(trace).slice(-2)).toEqual(['error', 'session.closed']);
      expect(server.stats().sessions).toMatchObject({ completed: 2, active: 0 });
      expect(summary.sessions.incomplete_reasons).toEqual({ server_error: 2 });
      expect(stdout).toMatch(/server error events: input_rejected 2/);
      expect(stdout.trim().split('\n').pop()).toBe('FAILED: no session completed (2 server_error)');
    } finally {
      await server.close();
    }
  });

  it('completes a session whose server lingers after session.closed, closing the socket itself within its bound', async () => {
    const server = await startFaultyMock({ after_appends: 1, action: 'linger' });
    try {
      const started = performance.now();
      const { code, summary, dir } = await probe(server.url, FLAGS);
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(summary.sessions).toMatchObject({ completed: 2, incomplete: 0 });
      expect(code).toBe(0);
      expect(received(await traceOf(dir, 's0')).at(-1)).toBe('session.closed');
    } finally {
      await server.close();
    }
  });

  it('records each retried refusal as an admission record before the session, then the last refusal as its error', async () => {
    const server = await startMockServer({ port: 0, max_sessions: 1 });
    try {
      const { summary, dir } = await probe(server.url, [...FLAGS, '--open-parallel', '1']);
      expect(summary.sessions.incomplete_reasons).toEqual({ admission_refused: 1 });
      const trace = await traceOf(dir, 's1');
      // Three retries: four refusals, the three retried ones admission records, the fourth the session's error (sglang-omni's client's `admit`).
      expect(trace.map((l) => l.direction)).toEqual(['admission', 'admission', 'admission', 'error']);
      expect(trace.slice(0, 3).map((l) => l.event)).toEqual([1, 2, 3].map((attempt) => ({ type: 'connection_denied', http_status: 503, attempt })));
      expect(String(trace[3].event.message)).toMatch(/^admission_refused: server refused the session with HTTP 503 4 times/);
    } finally {
      await server.close();
    }
  });
});

describe('probe run (native): the server grant decides the output rate', () => {
  it('times audio at the granted 24,000 Hz with no flag, and records the grant in run.json', async () => {
    const server = await startMockServer({ port: 0, output_sample_rate: 24000 });
    try {
      const { code, dir, stderr } = await probe(server.url, ['--concurrency', '1', '--duration', '0.8']);
      expect(code).toBe(0);
      const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
      expect(run.server_grant).toMatchObject({ output_sample_rate: 24000, native_unit_ms: 80, output_sample_rate_used: 24000, output_sample_rate_source: 'server grant' });
      const file = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
      // 10 units of 80 ms in, 10 units of 80 ms out: 3,840 bytes each at 24 kHz.
      expect(file.duplex_session_metrics[0].responses[0].audio_duration_ms).toBeCloseTo(800, 6);
      expect(stderr).not.toMatch(/warning/);
    } finally {
      await server.close();
    }
  });

  it('lets --output-sample-rate override the grant, with one warning when they disagree', async () => {
    const server = await startMockServer({ port: 0, output_sample_rate: 24000 });
    try {
      const { dir, stderr } = await probe(server.url, ['--concurrency', '2', '--duration', '0.8', '--output-sample-rate', '22050']);
      expect(stderr.match(/warning: the server grants 24000 Hz output but --output-sample-rate is 22050/g)).toHaveLength(1);
      const run = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
      expect(run.server_grant).toMatchObject({ output_sample_rate: 24000, output_sample_rate_used: 22050, output_sample_rate_source: '--output-sample-rate' });
      const file = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
      expect(file.duplex_session_metrics[0].responses[0].audio_duration_ms).toBeCloseTo((10 * 3840) / 2 / 22.05, 3);
    } finally {
      await server.close();
    }
  });
});

describe('probe run (native): an interrupted session', () => {
  it('is incomplete, reason interrupted, however cleanly its flow ends: its input was cut short', async () => {
    const server = await startMockServer({ port: 0 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-run-'));
      const signals = new EventEmitter();
      const io = {
        stdout: { write: () => true },
        stderr: { write: () => true, isTTY: false },
        signals,
        exitNow: () => undefined,
        argv: [],
      };
      const started = runCommand(parseRunOptions(['--url', server.url, '--output', dir, '--quiet', '--concurrency', '2', '--duration', '5']), io);
      await new Promise((r) => setTimeout(r, 1500));
      signals.emit('SIGINT');
      expect(await started).toBe(130);
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      expect(summary.interrupted).toBe(true);
      expect(summary.sessions).toMatchObject({ completed: 0, incomplete: 2, incomplete_reasons: { interrupted: 2 } });
      expect(summary.packets.sent).toBeLessThan(2 * 63);
    } finally {
      await server.close();
    }
  });
});
