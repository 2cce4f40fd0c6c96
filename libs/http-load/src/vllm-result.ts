import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { decodeHistogram } from '@duplex-bench/metrics';
import { notValid, RunFileError } from '@duplex-bench/results';
import { meetsGoodput, type GoodputBounds } from './goodput';
import type { HttpSummary } from './http-summary';
import type { RequestRecord } from './request-record';

/**
 * `vllm bench serve --save-result`'s file, from a run's requests.jsonl and summary: the keys of
 * `vllm/benchmarks/serve.py` (its `result_json`, less what `--save-detailed` alone keeps) with
 * vLLM's meanings, computed as vLLM computes them:
 * - a request's clock starts when it is sent (vLLM's `st`, after its `--max-concurrency` wait:
 *   our `dispatched_s`); `ttft` ends at the first output chunk, `latency` (e2el) at the last;
 * - `tpot` = (latency − ttft) / (output tokens − 1) over requests of two or more tokens; a request of
 *   one token has a TPOT of 0 for goodput;
 * - `itl` is every interval between output chunks (here from the run's HDR histogram of them);
 * - mean, median, std (population) and percentiles as numpy's (linear between ranks), in ms;
 * - throughputs over `duration`: the first intended start to the last end.
 * `max_output_tokens_per_s` is the most output chunks received in one second of the run (vLLM
 * counts one token per chunk there, in seconds from its first request's send).
 */
export interface VllmResultOptions {
  summary: HttpSummary;
  /** Each process's requests.jsonl. */
  request_files: string[];
  model: string;
  tokenizer_id: string | null;
  /** `--requests` when given, else the requests made. */
  num_prompts: number;
  /** `--goodput`, vLLM's rule applied to vLLM's figures. */
  goodput?: GoodputBounds;
  date?: Date;
}

/** The percentiles written (vLLM's `--metric-percentiles`; its default is 99 alone). */
export const VLLM_PERCENTILES = [50, 90, 95, 99];
/** The figures written with percentiles (vLLM's `--percentile-metrics`; its default is ttft,tpot,itl). */
export const VLLM_PERCENTILE_METRICS = ['ttft', 'tpot', 'itl', 'e2el'];

/** numpy.percentile's default (linear between the closest ranks) of sorted values; 0 for none, as vLLM's `np.percentile(x or 0, p)`. */
export function npPercentile(sorted: Float64Array | number[], p: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const at = ((n - 1) * p) / 100;
  const lo = Math.floor(at);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

/** Mean, median, population std and the percentiles of `values` (s), in ms, under vLLM's key names for `name`. */
function figures(name: string, values_s: number[], out: Record<string, unknown>): void {
  const sorted = Float64Array.from(values_s).sort();
  const n = sorted.length;
  const mean = n === 0 ? 0 : sorted.reduce((a, v) => a + v, 0) / n;
  const std = n === 0 ? 0 : Math.sqrt(sorted.reduce((a, v) => a + (v - mean) ** 2, 0) / n);
  out[`mean_${name}_ms`] = mean * 1000;
  out[`median_${name}_ms`] = npPercentile(sorted, 50) * 1000;
  out[`std_${name}_ms`] = std * 1000;
  for (const p of VLLM_PERCENTILES) out[`p${p}_${name}_ms`] = npPercentile(sorted, p) * 1000;
}

/**
 * Reads each line of a requests.jsonl in turn, never the whole file at once. A line that is not JSON
 * throws RunFileError naming the file and the line (the last line: that the file may be cut short).
 */
export async function forEachRecord(path: string, fn: (r: RequestRecord) => void): Promise<void> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let n = 0;
  let bad: { line: number; err: unknown } | null = null;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    // A line after the bad one: the file was not cut short there.
    if (bad) throw new RunFileError(path, `line ${bad.line}: ${notValid('JSON', bad.err, false)}`);
    let record: RequestRecord;
    try {
      record = JSON.parse(line) as RequestRecord;
    } catch (err) {
      bad = { line: n, err };
      continue;
    }
    fn(record);
  }
  if (bad) throw new RunFileError(path, `line ${bad.line}: ${notValid('JSON', bad.err)}`);
}

const pad2 = (n: number) => String(n).padStart(2, '0');
/** vLLM's `datetime.now().strftime("%Y%m%d-%H%M%S")`, local time. */
const vllmDate = (d: Date) => `${d.getFullYear()}${pad2(d.getMonth() + 1)}${pad2(d.getDate())}-${pad2(d.getHours())}${pad2(d.getMinutes())}${pad2(d.getSeconds())}`;

export async function vllmResult(o: VllmResultOptions): Promise<Record<string, unknown>> {
  const s = o.summary;
  const rows: Array<{ index: number; latency: number; queue: number }> = [];
  const ttfts: number[] = [];
  const tpots: number[] = [];
  const e2els: number[] = [];
  const queueOk: number[] = [];
  const e2elWithQueue: number[] = [];
  const spans: Array<[number, number]> = [];
  let input = 0;
  let output = 0;
  let completed = 0;
  let good = 0;
  for (const path of o.request_files) {
    await forEachRecord(path, (r) => {
      const sent = r.dispatched_s;
      // One never sent waited in the client queue until it ended (queue_timeout, or an interrupt).
      const queue = sent === null ? (r.end_s === null ? 0 : Math.max(0, r.end_s - r.intended_s)) : Math.max(0, sent - r.intended_s);
      const ok = r.error === null && r.end_s !== null && r.first_token_s !== null && r.last_token_s !== null && sent !== null;
      if (!ok) {
        rows.push({ index: r.index, latency: 0, queue });
        return;
      }
      const ttft = (r.first_token_s as number) - sent;
      const latency = (r.last_token_s as number) - sent;
      const tpot = r.tokens > 1 ? (latency - ttft) / (r.tokens - 1) : 0;
      rows.push({ index: r.index, latency, queue });
      completed++;
      input += r.prompt_tokens ?? 0;
      output += r.tokens;
      ttfts.push(ttft);
      e2els.push(latency);
      if (r.tokens > 1) tpots.push(tpot);
      queueOk.push(queue);
      e2elWithQueue.push(latency + queue);
      spans.push([sent, sent + latency]);
      if (o.goodput && meetsGoodput(o.goodput, { ttft: ttft * 1000, tpot: tpot * 1000, e2el: latency * 1000 })) good++;
    });
  }
  rows.sort((a, b) => a.index - b.index);
  const duration = s.window_s;
  const per = (v: number) => (duration > 0 ? v / duration : 0);
  const open = s.load.mode === 'open';
  const backend = s.load.endpoint === 'chat' ? 'openai-chat' : 'openai';
  const result: Record<string, unknown> = {
    date: vllmDate(o.date ?? new Date()),
    endpoint_type: backend,
    backend,
    label: null,
    model_id: o.model,
    tokenizer_id: o.tokenizer_id,
    num_prompts: o.num_prompts,
    // vLLM writes an infinite rate as "inf"; its constant arrivals are burstiness inf, written the same way here (JSON has no Infinity).
    request_rate: open ? s.load.rate_rps : 'inf',
    burstiness: !open || s.load.arrivals === 'poisson' ? 1.0 : 'inf',
    max_concurrency: open ? (s.load.max_concurrency ?? null) : (s.load.concurrency ?? null),
    duration,
    completed,
    failed: rows.length - completed,
    total_input_tokens: input,
    total_output_tokens: output,
    request_throughput: per(completed),
    request_goodput: o.goodput ? per(good) : null,
    output_throughput: per(output),
    total_token_throughput: per(input + output),
    latencies: rows.map((r) => r.latency),
    queue_times: rows.map((r) => r.queue),
    max_output_tokens_per_s: s.timeline.output_chunks.reduce((m, v) => Math.max(m, v), 0),
    max_concurrent_requests: peakConcurrency(spans),
    rtfx: 0.0,
  };
  figures('ttft', ttfts, result);
  figures('tpot', tpots, result);
  itlFigures(s, result);
  figures('e2el', e2els, result);
  const capped = result.max_concurrency !== null;
  if (capped) {
    figures('client_queue_time', queueOk, result);
    if (open) figures('e2el_including_client_queue', e2elWithQueue, result);
  }
  result.duplex_bench = {
    note: "vllm bench serve --save-result's keys with vLLM's meanings, computed from this run's requests.jsonl (ITL from its histogram of every interval between output chunks)",
    as_if: `--percentile-metrics ${VLLM_PERCENTILE_METRICS.join(',')}${capped ? ',client_queue_time' + (open ? ',e2el_including_client_queue' : '') : ''} --metric-percentiles ${VLLM_PERCENTILES.join(',')}`,
    output_tokens: s.tokens.origin,
    clock: 'a request is timed from its send (after any --max-concurrency wait) to its first and last output chunks',
    summary: 'summary.json',
  };
  return result;
}

/** vLLM's ITL keys from the run's histogram of every interval between output chunks (HDR: 3 significant digits). */
function itlFigures(s: HttpSummary, out: Record<string, unknown>): void {
  const encoded = s.histograms.itl_raw;
  const h = encoded ? decodeHistogram(encoded) : null;
  const us = (v: number) => v / 1000;
  const n = h?.totalCount ?? 0;
  out.mean_itl_ms = h && n > 0 ? us(h.mean) : 0;
  out.median_itl_ms = h && n > 0 ? us(h.getValueAtPercentile(50)) : 0;
  out.std_itl_ms = h && n > 0 ? us(h.stdDeviation) : 0;
  for (const p of VLLM_PERCENTILES) out[`p${p}_itl_ms`] = h && n > 0 ? us(Math.min(h.getValueAtPercentile(p), h.maxValue)) : 0;
}

/** The most requests in flight at once over half-open [send, last output) spans (vLLM's sweep line: an end before a start at the same time). */
export function peakConcurrency(spans: Array<[number, number]>): number {
  const events: Array<[number, number]> = [];
  for (const [a, b] of spans) events.push([a, 1], [b, -1]);
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of events) {
    now += d;
    if (now > peak) peak = now;
  }
  return peak;
}
