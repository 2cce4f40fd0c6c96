import { join } from 'node:path';
import { Launcher, withoutFlags, type LaunchResult } from '@duplex-bench/launcher';
import type { HttpSummary } from './http-summary';
import { mergeHttpSummaries } from './merge';
import { readJsonFile, runFile } from '@duplex-bench/results';

export interface HttpLaunchOptions {
  /** The entry module whose `http` command each child runs. */
  module: string;
  processes: number;
  /** The command line given, without the flags this sets per child. */
  argv: string[];
  output: string;
  model: string;
  api_key?: string;
  seed: number;
  /** Exactly one of rate (open loop) and concurrency (closed loop). */
  rate?: number;
  concurrency?: number;
  /** Open loop: `--max-concurrency`, split between the processes as the lanes are. */
  max_concurrency?: number;
  requests?: number;
  duration_s?: number;
  request_timeout_s: number;
  start_timeout_s: number;
  /** `--metrics-port P`: child i serves its own /metrics on P + i (0: each a free port). */
  metrics_port?: number;
  metrics_linger_s?: number;
  onStderr(index: number, line: string): void;
}

/** `total` split into `parts` whole shares, the first ones one larger. */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/**
 * The summaries the children wrote under `p<i>/`, and one line for each that left none: its failure,
 * or that it left no summary, or the summary named with what is wrong with it.
 */
export async function childSummaries(output: string, children: ReadonlyArray<{ index: number; failure: string | null }>): Promise<{ parts: HttpSummary[]; died: string[] }> {
  const parts: HttpSummary[] = [];
  const died: string[] = [];
  for (const c of children) {
    let why = 'left no summary';
    const part = await readJsonFile<HttpSummary>(runFile(join(output, `p${c.index}`), 'summary')).catch((err: Error) => {
      why = `left a summary that does not read: ${err.message}`;
      return null;
    });
    if (part) parts.push(part);
    else died.push(`process ${c.index} ${c.failure ?? why}`);
  }
  return { parts, died };
}

/**
 * `http --processes N`: N children through the launcher, each with its share of the rate (or of the
 * lanes) and of the requests, and its own seed, all starting at one gate; each writes under `p<i>/`.
 * Returns the launcher's outcome and, once they ran, their pooled summary and the ones that left none.
 */
export async function launchHttpProcesses(o: HttpLaunchOptions, interrupts: (stop: () => void) => void): Promise<{ result: LaunchResult; summary: ReturnType<typeof mergeHttpSummaries> | null; died: string[] }> {
  const n = o.processes;
  const lanes = o.concurrency === undefined ? null : shares(o.concurrency, n);
  const requests = o.requests === undefined ? null : shares(o.requests, n);
  const caps = o.max_concurrency === undefined ? null : shares(o.max_concurrency, n);
  // The launcher writes the vLLM file from every child's requests.
  const base = withoutFlags(o.argv, ['rate', 'concurrency', 'max-concurrency', 'requests', 'seed', 'output', 'processes', 'model', 'api-key', 'quiet', 'metrics-port', 'vllm-result']);
  const longest_s = o.duration_s ?? (o.rate !== undefined ? (o.requests as number) / o.rate : o.request_timeout_s * Math.ceil((o.requests as number) / (o.concurrency as number)));
  const launcher = new Launcher({
    module: o.module,
    count: n,
    args: (i) => [
      'http',
      ...base,
      ...(o.rate !== undefined ? ['--rate', String(o.rate / n)] : ['--concurrency', String(lanes?.[i])]),
      ...(requests ? ['--requests', String(requests[i])] : []),
      ...(caps ? ['--max-concurrency', String(caps[i])] : []),
      ...['--seed', String(o.seed + i), '--model', o.model, '--output', join(o.output, `p${i}`), '--quiet'],
      ...(o.metrics_port === undefined ? [] : ['--metrics-port', String(o.metrics_port === 0 ? 0 : o.metrics_port + i)]),
    ],
    // The key goes through the environment, never a command line.
    env: o.api_key ? { OPENAI_API_KEY: o.api_key } : undefined,
    start_timeout_ms: o.start_timeout_s * 1000,
    // With --max-concurrency a request may wait its bound in the client's queue and then have it again once sent.
    run_timeout_ms: (longest_s + o.request_timeout_s * (o.max_concurrency === undefined ? 1 : 2) + 60 + (o.metrics_port === undefined ? 0 : (o.metrics_linger_s ?? 0))) * 1000,
    onStderr: o.onStderr,
  });
  interrupts(() => launcher.interrupt());
  const result = await launcher.run();
  if (result.start_failure) return { result, summary: null, died: [] };
  const { parts, died } = await childSummaries(o.output, result.children);
  const summary = parts.length > 0 ? mergeHttpSummaries(parts) : null;
  if (summary && died.length > 0) {
    summary.qualified = false;
    summary.unqualified_reason = died.join('; ');
  }
  return { result, summary, died };
}
