import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError, type RunIo } from '@duplex-bench/cli';
import { httpRun, type HttpFlagValues } from './run-http';

/** `http`'s flags as the parser gives them with nothing but --url, --rate, --requests and --output (HTTP_FLAGS' defaults). */
const flags = (output: string, over: Partial<HttpFlagValues> = {}): HttpFlagValues => ({
  url: 'http://127.0.0.1:9',
  endpoint: 'chat',
  arrivals: 'poisson',
  rate: 5,
  requests: 5,
  'warmup-s': 0,
  'input-tokens': '128',
  'max-tokens': 128,
  'ignore-eos': false,
  'no-stream': false,
  seed: 1,
  output,
  'request-timeout-s': 60,
  'max-connections': 1024,
  'max-send-lag-ms': 10,
  'allow-unqualified': false,
  processes: 1,
  'start-timeout-s': 30,
  'metrics-linger-s': 15,
  'otlp-interval-s': 5,
  'dashboard-linger-s': 30,
  'server-metrics-interval-s': 1,
  'server-histogram': [],
  ...over,
});

/** A command's io that keeps what it writes; no signal ever comes. */
function io(): RunIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: { write: (s: string) => out.push(s) },
    stderr: { write: (s: string) => err.push(s) },
    signals: { on: () => undefined, off: () => undefined },
    exitNow: (code: number) => {
      throw new Error(`exitNow(${code})`);
    },
    argv: [],
  };
}

const render = () => 'rendered';

describe('httpRun', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'http-run-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** The UsageError `httpRun` refuses the flags with (`argv`: what the user typed, where it matters). */
  async function refusal(over: Partial<HttpFlagValues>, argv: string[] = []): Promise<string> {
    const output = join(dir, 'out');
    const given = io();
    const error = await httpRun(flags(output, over), argv, given, render, 'unused').then(
      (code) => new Error(`accepted, exit status ${code}`),
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(UsageError);
    // Refused before anything starts: nothing written, no output directory.
    expect(given.out.concat(given.err)).toEqual([]);
    expect(existsSync(output)).toBe(false);
    return (error as Error).message;
  }

  it.each<[string, Partial<HttpFlagValues>, string]>([
    ['--rate and --concurrency', { concurrency: 2 }, 'give one of --rate R (open loop) or --concurrency N (closed loop)'],
    ['neither --rate nor --concurrency', { rate: undefined }, 'give one of --rate R (open loop) or --concurrency N (closed loop)'],
    ['neither --requests nor --duration', { requests: undefined }, 'give --requests N and/or --duration S: a run must end by itself'],
    ['--concurrency below --processes', { rate: undefined, concurrency: 2, processes: 3 }, '--concurrency 2 cannot be split over 3 processes'],
    ['--requests below --processes', { requests: 2, processes: 3 }, '--requests 2 cannot be split over 3 processes'],
    ['a --url that is no URL', { url: 'not a url' }, '--url: not a URL: "not a url"'],
    ['a ws:// --url', { url: 'ws://127.0.0.1:9' }, '--url must be http:// or https://, got ws:'],
    ['a --metrics-port past 65535', { 'metrics-port': 70000 }, '--metrics-port must be a TCP port (0 to 65535), got 70000'],
    ['a ws:// --otlp-endpoint', { 'otlp-endpoint': 'ws://127.0.0.1:4318' }, '--otlp-endpoint must be http:// or https://, got "ws://127.0.0.1:4318"'],
    ['--server-histogram without --server-metrics', { 'server-histogram': ['vllm:x'] }, '--server-histogram goes with --server-metrics'],
    ['--max-concurrency in a closed loop', { rate: undefined, concurrency: 5, 'max-concurrency': 2 }, '--max-concurrency caps an open loop (--rate); a closed loop has --concurrency'],
    ['--max-concurrency below --processes', { 'max-concurrency': 1, processes: 2 }, '--max-concurrency 1 cannot be split over 2 processes'],
    ['an unknown --goodput figure', { goodput: 'itl:20' }, '--goodput: unknown figure "itl"; the figures are ttft, tpot, e2el'],
    ['a --goodput that is no KEY:MS', { goodput: 'ttft' }, '--goodput: cannot read "ttft" (KEY:MS, a non-negative number of ms)'],
    ['--input-tokens that are no count', { 'input-tokens': 'lots' }, '--input-tokens must be N or lognormal:MEAN,COV, got "lots"'],
  ])('refuses %s, naming the flag in one line', async (_what, over, message) => {
    const text = await refusal(over);
    expect(text).toBe(message);
    expect(text).not.toContain('\n');
  });

  it('refuses a --tokenizer it cannot read, naming the flag and the file', async () => {
    const missing = join(dir, 'nonexistent', 'tokenizer.json');
    expect(await refusal({ tokenizer: missing })).toMatch(new RegExp(`^--tokenizer: ${missing.replace(/[.\\/]/g, '\\$&')}: ENOENT`));
  });

  it('refuses --dataset beside a typed --input-tokens (the default alone is no conflict), and a --dataset it cannot read', async () => {
    const missing = join(dir, 'prompts.jsonl');
    expect(await refusal({ dataset: missing, 'input-tokens': '64' }, ['--input-tokens', '64'])).toBe('--dataset and --input-tokens exclude each other');
    expect(await refusal({ dataset: missing, 'input-tokens': '64' }, ['--input-tokens=64'])).toBe('--dataset and --input-tokens exclude each other');
    expect(await refusal({ dataset: missing })).toMatch(/^--dataset: .*ENOENT/);
  });

  it('without --model and no server to list one: exit status 1, one error line naming /v1/models, nothing written', async () => {
    // A port nothing listens on: bound, then closed.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const output = join(dir, 'out');
    const given = io();
    expect(await httpRun(flags(output, { url: `http://127.0.0.1:${port}` }), [], given, render, 'unused')).toBe(1);
    expect(given.err).toHaveLength(1);
    expect(given.err[0]).toMatch(new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port}/v1/models: .*ECONNREFUSED.*\\n$`));
    expect(given.err[0].trim()).not.toContain('\n');
    expect(given.out).toEqual([]);
    expect(existsSync(output)).toBe(false);
  });
});
