import { mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockServer } from '@duplex-bench/mock-servers';
import { runCli } from './spawn.spec-helpers';

jest.setTimeout(60_000);

/** Runs the probe CLI as a user would, bounded at 30 s. */
const probe = (args: string[]) => runCli(args);

describe('probe CLI, bad input', () => {
  it.each([
    [['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '0', '--duration', '1', '--output', '/tmp/x'], /^error: --concurrency must be at least 1, got 0\n$/],
    [['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '1', '--duration', '-3', '--output', '/tmp/x'], /^error: --duration must be greater than 0, got -3\n$/],
    [['run', '--url', 'ftp://127.0.0.1:9/', '--concurrency', '1', '--duration', '1', '--output', '/tmp/x'], /^error: --url must start with ws:\/\/ or wss:\/\//],
    [['launch'], /^error: unknown command "launch"/],
    [
      ['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--protocol', 'vllm-omni', '--turn-detection', 'semantic_vad', '--concurrency', '1', '--duration', '1', '--output', '/tmp/x'],
      /^error: --turn-detection semantic_vad is for --protocol openai \(vllm-omni takes server_vad or none\)\n$/,
    ],
  ])('%j: one line on stderr, status 2, no stack', async (args, message) => {
    const { code, stderr, stdout } = await probe(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stdout).toBe('');
  });
});

describe('probe run --processes', () => {
  it('fails within the start bound, naming the child and its reason, when children cannot connect', async () => {
    const t0 = Date.now();
    const { code, stderr } = await probe(['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '2', '--processes', '2', '--duration', '5', '--output', '/tmp/duplex-bench-launch-fail', '--start-timeout-s', '20']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error: process \d failed before the start gate: cannot connect to ws:\/\/127\.0\.0\.1:9\/v1\/realtime: ECONNREFUSED/);
    expect(Date.now() - t0).toBeLessThan(25_000);
  });

  it('refuses --processes 0 and a non-integer in one line, status 2', async () => {
    for (const value of ['0', '1.5']) {
      const { code, stderr } = await probe(['run', '--url', 'ws://127.0.0.1:9/v1/realtime', '--concurrency', '2', '--processes', value, '--duration', '1', '--output', '/tmp/x']);
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

describe('probe run --processes --protocol openai', () => {
  it('warns once, not once a process, that OpenAI itself takes only 24,000 Hz when another --sample-rate is given', async () => {
    const mock = await startMockServer({ port: 0, protocol: 'openai', openai: { silence_ms: 200 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-launch-rate-'));
      const { code, stderr } = await probe([
        'run', '--url', mock.url, '--protocol', 'openai', '--sample-rate', '16000', '--processes', '2', '--concurrency', '1',
        '--duration', '0.8', '--cpu-affinity', 'off', '--output', dir, '--allow-unqualified',
      ]);
      expect(code).toBe(0);
      expect(stderr.split('\n').filter((l) => l.includes('OpenAI itself accepts only 24000 Hz'))).toEqual([
        'warning: --sample-rate 16000: OpenAI itself accepts only 24000 Hz for audio/pcm input; sent as asked, for a server that takes it',
      ]);
      const run = JSON.parse(await readFile(join(dir, 'p0', 'run.json'), 'utf8'));
      expect(run.dialect).toMatchObject({ input_sample_rate: 16000 });
    } finally {
      await mock.close();
    }
  });

  it('gives children the key through their environment: it is sent on every upgrade and written nowhere', async () => {
    const secret = 'sk-test-launch-7fQ2xN';
    const mock = await startMockServer({ port: 0, protocol: 'openai', openai: { silence_ms: 200 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-launch-key-'));
      const { code, stdout, stderr } = await probe([
        'run', '--url', mock.url, '--protocol', 'openai', '--api-key', secret, '--processes', '2', '--concurrency', '2',
        '--duration', '0.8', '--cpu-affinity', 'off', '--trace', 'full', '--keep-traces', '--output', dir, '--allow-unqualified',
      ]);
      expect(code).toBe(0);
      // Two children of two sessions each, and the parent's one look at session.created (children are told the packet size).
      expect(mock.stats().sessions).toMatchObject({ opened: 5, with_bearer: 5, completed: 5 });
      expect(stdout + stderr).not.toContain(secret);
      const files = async (d: string): Promise<string[]> =>
        (await Promise.all((await readdir(d, { withFileTypes: true })).map((e) => (e.isDirectory() ? files(join(d, e.name)) : [join(d, e.name)])))).flat();
      const written = await files(dir);
      expect(written.filter((f) => f.endsWith('trace.jsonl'))).toHaveLength(4);
      for (const f of written) expect((await readFile(f)).includes(secret)).toBe(false);
      // The children's responses are pooled at the top, like their packets. How many a session gets
      // is the mock's VAD's to say: a child's sends held up past silence_ms on a busy host end a turn
      // early and start another, so the top's count is checked against the children's, not a constant.
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      const children = await Promise.all(['p0', 'p1'].map(async (p) => JSON.parse(await readFile(join(dir, p, 'summary.json'), 'utf8'))));
      const responses = children.reduce((n, c) => n + c.duplex.responses, 0);
      expect(children.map((c) => c.duplex.sessions)).toEqual([2, 2]);
      expect(responses).toBeGreaterThanOrEqual(4);
      expect(summary.duplex).toMatchObject({ sessions: 4, responses });
      const duplex = JSON.parse(await readFile(join(dir, 'duplex_metrics.json'), 'utf8'));
      expect(duplex.duplex_session_metrics.map((s: { session_id: string }) => s.session_id).sort()).toEqual(['p0/s0', 'p0/s1', 'p1/s0', 'p1/s1']);
      expect(stdout).toMatch(new RegExp(`responses of the 4 complete sessions \\(4 answered\\): ${responses} finished`));
    } finally {
      await mock.close();
    }
  });
});

describe('probe run --processes --slo', () => {
  it('judges the SLO once, on the pooled summary: the children run without it, and a failed term exits 4 naming it', async () => {
    const mock = await startMockServer({ port: 0, protocol: 'openai', openai: { silence_ms: 200 }, stamp_sends: true });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-launch-slo-'));
      const { code, stdout } = await probe([
        'run', '--url', mock.url, '--protocol', 'openai', '--processes', '2', '--concurrency', '1', '--duration', '0.8',
        '--cpu-affinity', 'off', '--output', dir, '--allow-unqualified', '--slo', 'stream_ttfp_p99_ms<=0.001,incomplete=0,receive_delay_p99_ms<=60000',
      ]);
      // The stream-window TTFP runs from input start, so it is never under a µs. (TTFP from
      // response.created can be 0: the mock's first audio often arrives in the same read.)
      expect(code).toBe(4);
      expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^SLO FAILED: stream_ttfp_p99_ms<=0\.001 \(stream TTFP p99 [\d.]+\)$/);
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      expect(summary.slo).toMatchObject({ passed: false, terms: [{ term: 'stream_ttfp_p99_ms<=0.001', ok: false }, { term: 'incomplete=0', value: 0, ok: true }, { term: 'receive_delay_p99_ms<=60000', ok: true }] });
      // The stamping mock's frames: each child's receive delay pooled into the launcher's summary, and said.
      const children = await Promise.all(['p0', 'p1'].map(async (p) => JSON.parse(await readFile(join(dir, p, 'summary.json'), 'utf8')).receive_delay_ms.count as number));
      expect(children.every((n) => n > 0)).toBe(true);
      expect(summary.receive_delay_ms.count).toBe(children[0] + children[1]);
      expect(stdout).toMatch(new RegExp(`^client receive delay \\(server send stamp to client receive stamp.*\\(n ${summary.receive_delay_ms.count}\\)$`, 'm'));
      // Each child ran without the terms: its own summary has no slo block.
      expect(JSON.parse(await readFile(join(dir, 'p0', 'summary.json'), 'utf8')).slo).toBeUndefined();
    } finally {
      await mock.close();
    }
  });
});

describe('probe run --processes --protocol vllm-omni', () => {
  it("pools the children's vllm_omni block at the top, as merge does", async () => {
    const mock = await startMockServer({ port: 0, protocol: 'openai', profile: 'model', max_sessions: 2, model: { ttfp_ms: 100, rtf: 0.5 }, openai: { flavor: 'vllm-omni', silence_ms: 200 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-launch-vllm-'));
      const { code } = await probe([
        'run', '--url', mock.url, '--protocol', 'vllm-omni', '--model', 'm', '--audio', join(__dirname, '..', '..', '..', 'libs', 'audio', 'speech', 'q1.wav'), '--processes', '2', '--concurrency', '1', '--duration', '3',
        '--cpu-affinity', 'off', '--output', dir, '--allow-unqualified',
      ]);
      expect(code).toBe(0);
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      const children = await Promise.all(['p0', 'p1'].map(async (p) => JSON.parse(await readFile(join(dir, p, 'summary.json'), 'utf8'))));
      expect(children.every((c) => c.vllm_omni !== undefined)).toBe(true);
      expect(summary.vllm_omni).toBeDefined();
      expect(summary.vllm_omni.playback_ack_too_late).toBe(children.reduce((n, c) => n + c.vllm_omni.playback_ack_too_late, 0));
    } finally {
      await mock.close();
    }
  });
});

describe('probe run --processes --server-metrics', () => {
  /** A DCGM-like /metrics on 127.0.0.1 whose gauge moves at every scrape, and the run's arguments that scrape it. */
  async function gaugeServer() {
    let scrapes = 0;
    const metrics = createServer((_req, res) => {
      scrapes++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu="0"} ${1000 + scrapes}\n`);
    });
    await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(metrics.address() as AddressInfo).port}/metrics`;
    return {
      scrapes: () => scrapes,
      args: ['--server-metrics', url, '--server-metrics-interval-s', '0.5', '--server-gauge', 'DCGM_FI_DEV_FB_USED'],
      close: () => new Promise((resolve) => metrics.close(resolve)),
    };
  }
  const launched = (mockUrl: string, dir: string, more: string[]) =>
    probe(['run', '--url', mockUrl, '--protocol', 'openai', '--processes', '2', '--concurrency', '1', '--duration', '2', '--cpu-affinity', 'off', '--output', dir, '--allow-unqualified', ...more]);

  it("scrapes the server once for the run, in the launcher: the children do not, and the pooled summary has the server's figures", async () => {
    const mock = await startMockServer({ port: 0, protocol: 'openai', openai: { silence_ms: 200 } });
    const metrics = await gaugeServer();
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-launch-scrape-'));
      const { code } = await launched(mock.url, dir, metrics.args);
      expect(code).toBe(0);
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      expect(summary.server_metrics.gauges.DCGM_FI_DEV_FB_USED).toMatchObject({ kind: 'gauge', max: 1000 + metrics.scrapes() });
      // Every scrape was the launcher's: its rows are the scrapes the server answered.
      const rows = (await readFile(join(dir, 'server_metrics.jsonl'), 'utf8')).trim().split('\n');
      expect(rows).toHaveLength(metrics.scrapes());
      for (const p of ['p0', 'p1']) expect(JSON.parse(await readFile(join(dir, p, 'summary.json'), 'utf8')).server_metrics).toBeUndefined();
    } finally {
      await metrics.close();
      await mock.close();
    }
  });

  it('fails the run (exit 1), naming server_metrics.jsonl, when that file cannot be written, and still gives the figures', async () => {
    const mock = await startMockServer({ port: 0, protocol: 'openai', openai: { silence_ms: 200 } });
    const metrics = await gaugeServer();
    try {
      const dir = await mkdtemp(join(tmpdir(), 'probe-launch-scrape-unwritable-'));
      // The part file's place taken by a directory: it cannot be written (EISDIR), as on a full disk.
      await mkdir(join(dir, 'server_metrics.jsonl.part'));
      const { code, stdout, stderr } = await launched(mock.url, dir, metrics.args);
      expect(code).toBe(1);
      const line = /cannot write \S+\/server_metrics\.jsonl \(.*EISDIR.*\); kept the summary's server_metrics block$/;
      expect(stderr.split('\n').filter((l) => l.startsWith('error: '))).toEqual([expect.stringMatching(line)]);
      expect(stdout.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^FAILED: ${line.source}`));
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
      expect(summary.server_metrics.gauges.DCGM_FI_DEV_FB_USED).toMatchObject({ kind: 'gauge', max: 1000 + metrics.scrapes() });
      expect(summary.sessions.completed).toBe(2);
      expect((await readdir(dir)).filter((f) => f.startsWith('server_metrics'))).toEqual([]);
    } finally {
      await metrics.close();
      await mock.close();
    }
  });
});

describe('probe run without --url', () => {
  it('serves the built-in mock for the run, says so, writes its stats beside the run, and leaves no mock behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'probe-builtin-'));
    const { code, stderr } = await probe(['run', '--concurrency', '2', '--duration', '1', '--output', dir, '--allow-unqualified']);
    expect([code, stderr.match(/^error: .*$/m)?.[0] ?? null]).toEqual([0, null]);
    const said = /^no --url: serving the built-in mock \(duplex-bench serve --profile append-echo --stamp-sends\) at ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime, pid (\d+), for this run; its stats go to (\S+)$/m.exec(stderr);
    expect(said?.[2]).toBe(join(dir, 'mock.json'));
    const stats = JSON.parse(await readFile(join(dir, 'mock.json'), 'utf8'));
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(stats.appends).toBe(summary.packets.sent);
    // Its frames carry their send time: the client's own receive delay is measured.
    expect(summary.receive_delay_ms.count).toBeGreaterThan(summary.packets.sent);
    expect(summary.receive_delay_ms.p50).toBeGreaterThanOrEqual(0);
    // Its process is gone: signal 0 to its pid finds none.
    expect(() => process.kill(Number(said?.[1]), 0)).toThrow(/ESRCH/);
  });

  it('record without --url records a conversation against the built-in nemotron mock, and leaves no mock behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'record-builtin-'));
    const { code, stderr } = await probe(['record', '--conversation', 'default', '--duration', '4', '--concurrency', '2', '--per-subset', '2', '--postprocess', 'off', '--output', dir, '--allow-unqualified']);
    const said = /^no --url: serving the built-in mock \(duplex-bench serve --profile nemotron --conversation default --stamp-sends\) at ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime, pid (\d+), for this recording; its stats go to (\S+)$/m.exec(stderr);
    expect([code, said?.[2]]).toEqual([0, join(dir, 'mock.json')]);
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(summary.sessions.completed).toBeGreaterThan(0);
    expect(() => process.kill(Number(said?.[1]), 0)).toThrow(/ESRCH/);
  });

  it('needs --url for more than one process, in one line, exit 2', async () => {
    const { code, stderr } = await probe(['run', '--concurrency', '2', '--duration', '1', '--processes', '2', '--output', '/tmp/x']);
    expect([code, stderr]).toEqual([2, 'error: --url is required with --processes, --shard or --start-at (the built-in mock serves one process)\n']);
  });
});
