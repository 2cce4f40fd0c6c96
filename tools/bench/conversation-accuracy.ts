/**
 * How close a conversation run's behaviour figures are to what the mock did, per dialect and
 * session count: each mock (native nemotron, openai model, the vllm-omni flavour) is started as
 * its own process with the behaviour knobs and `--stats-output`, `run --conversation default` runs
 * against it, and the run's response and stop latency p50 are set beside the medians of the mock's
 * own log (answer start − the user's turn end as the mock heard it; answer end − barge-in onset).
 *
 *   node --import tsx tools/bench/conversation-accuracy.ts [--sessions 8,256] [--dialects native,openai,vllm-omni] [--duration 25] [--out DIR]
 *
 * Runs the compiled kit (bin/duplex-bench.js; `npm run build` first). Every process is bounded in
 * time; the mock is stopped by its PID once the run has ended.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { behaviourDelays, type BehaviourSessionLog } from '@duplex-bench/mock-servers';

const BIN = join(__dirname, '..', '..', 'bin', 'duplex-bench.js');

type Dialect = 'native' | 'openai' | 'vllm-omni';

const KNOBS = ['--conversation', 'default', '--respond-after-ms', '400', '--stop-after-ms', '200', '--takeover-after-ms', '800'];

/** The mock of each dialect, as the e2e tests start them. */
function mockArgs(dialect: Dialect, sessions: number): string[] {
  if (dialect === 'native') return ['--profile', 'nemotron', ...KNOBS];
  if (dialect === 'openai') return ['--protocol', 'openai', '--profile', 'model', ...KNOBS];
  return ['--protocol', 'openai', '--flavor', 'vllm-omni', '--unit-ms', '1000', '--max-sessions', String(sessions), ...KNOBS];
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** Runs a command to its end within `bound_ms` (killed past it); resolves with its status and output. */
function run(args: string[], bound_ms: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), bound_ms);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts a mock on a free port; resolves once it says where it listens. */
function startMock(args: string[], stats: string): Promise<{ url: string; stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--stats-output', stats, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('mock did not start within 10 s'));
    }, 10_000);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const url = /listening on (\S+)/.exec(out)?.[1];
      if (!url) return;
      clearTimeout(timer);
      const stop = () =>
        new Promise<void>((done) => {
          const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
          child.on('close', () => {
            clearTimeout(kill);
            done();
          });
          child.kill('SIGTERM');
        });
      resolve({ url, stop });
    });
  });
}

const median = (xs: number[]) => (xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]);

async function main(): Promise<void> {
  const counts = arg('sessions', '8,256').split(',').map(Number);
  const dialects = arg('dialects', 'native,openai,vllm-omni').split(',') as Dialect[];
  const duration_s = Number(arg('duration', '25'));
  const out = arg('out', join('out', 'conversation-accuracy'));
  await mkdir(out, { recursive: true });
  const f = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(1));
  const rows: string[] = ['| dialect | sessions | qualified | response p50, probe / mock (ms) | stop p50, probe / mock (ms) | late packets |', '| --- | --- | --- | --- | --- | --- |'];
  for (const n of counts) {
    for (const dialect of dialects) {
      const dir = join(out, `${dialect}-${n}`);
      const stats = join(out, `${dialect}-${n}-mock.json`);
      const mock = await startMock(mockArgs(dialect, n), stats);
      const r = await run([BIN, 'run', '--url', mock.url, '--protocol', dialect, '--concurrency', String(n), '--duration', String(duration_s), '--conversation', 'default', '--output', dir, '--json', '--quiet', '--allow-unqualified'], (duration_s + 120) * 1000);
      await mock.stop();
      const summary = JSON.parse(r.stdout.trim().split('\n').pop() || '{}') as {
        qualified?: boolean;
        packets?: { late: number };
        behaviour?: { response_latency_ms: { p50: number | null }; stop_latency_ms: { p50: number | null } };
        sessions?: { completed: number; started: number };
      };
      const t = behaviourDelays((JSON.parse(await readFile(stats, 'utf8')) as { behaviour: { sessions: BehaviourSessionLog[] } }).behaviour.sessions);
      const b = summary.behaviour;
      rows.push(
        `| ${dialect} | ${n} (${summary.sessions?.completed ?? 0} complete) | ${summary.qualified ? 'yes' : 'no'} | ${f(b?.response_latency_ms.p50)} / ${f(median(t.response_ms))} | ${f(b?.stop_latency_ms.p50)} / ${f(median(t.stop_ms))} | ${summary.packets?.late ?? '-'} |`,
      );
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

void main();
