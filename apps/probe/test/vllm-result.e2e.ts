import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpStub, type HttpStub } from '@duplex-bench/mock-servers';
import type { HttpSummary, RequestRecord } from '@duplex-bench/http-load';
import { runCli } from './spawn.spec-helpers';

jest.setTimeout(90_000);

/**
 * The keys `vllm bench serve --save-result` writes, as vLLM's own code names them
 * (vllm-project/vllm, vllm/benchmarks/serve.py at 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1):
 * `main_async`'s setup keys, then `benchmark()`'s `result` for a generation task less the fields
 * only `--save-detailed` keeps (input_lens, output_lens, start_times, ttfts, itls,
 * generated_texts, errors), then `process_one_metric`'s mean_/median_/std_/pNN_ keys of each
 * metric chosen (default ttft, tpot, itl; e2el when asked) at each percentile (default 99).
 */
const VLLM_SETUP_KEYS = ['date', 'endpoint_type', 'backend', 'label', 'model_id', 'tokenizer_id', 'num_prompts', 'request_rate', 'burstiness', 'max_concurrency'];
const VLLM_RESULT_KEYS = [
  'duration',
  'completed',
  'failed',
  'total_input_tokens',
  'total_output_tokens',
  'request_throughput',
  'request_goodput',
  'output_throughput',
  'total_token_throughput',
  'latencies',
  'queue_times',
  'max_output_tokens_per_s',
  'max_concurrent_requests',
  'rtfx',
];
const metricKeys = (metric: string, percentiles: number[]) => [`mean_${metric}_ms`, `median_${metric}_ms`, `std_${metric}_ms`, ...percentiles.map((p) => `p${p}_${metric}_ms`)];
const DETAILED_ONLY = ['input_lens', 'output_lens', 'start_times', 'ttfts', 'itls', 'generated_texts', 'errors'];

const within = (ours: number | null, theirs: unknown, share = 0.02) => {
  expect(typeof theirs).toBe('number');
  expect(ours).not.toBeNull();
  expect(Math.abs((theirs as number) - (ours as number)) / (ours as number)).toBeLessThan(share);
};

describe('duplex-bench http --goodput --vllm-result against the variable-response stub', () => {
  let stub: HttpStub | undefined;
  afterAll(() => stub?.close());

  it("writes vLLM's keys with values within 2% of our figures of the same meaning; request_goodput is what requests.jsonl gives", async () => {
    // TTFT lognormal around 280 ms (cov 0.3): a good share of requests pass ttft:300 and a good share fail it.
    // Two tokens per chunk, 5 ms a token: a chunk gap (ITL, vLLM's itl) is twice a token's time (TPOT).
    stub = await startHttpStub({ kind: 'variable-response', first_chunk_ms: 280, first_chunk_spread: 0.3, inter_token_ms: 5, output_len_mean: 40, output_len_spread: 0.3, stream_interval: 2 });
    const dir = await mkdtemp(join(tmpdir(), 'vllm-result-'));
    const vllmFile = join(dir, 'vllm.json');
    // The figures are what this test is for; a late send on a busy host is allowed (http-load.e2e tests the verdict).
    const { code, stdout, stderr } = await runCli(['http', '--url', stub.url, '--rate', '40', '--requests', '400', '--goodput', 'ttft:300,tpot:50', '--vllm-result', vllmFile, '--output', dir, '--json', '--allow-unqualified'], 60_000);
    expect(stderr).not.toMatch(/^error/m);
    expect(code).toBe(0);
    const summary = JSON.parse(stdout.trim().split('\n').pop() as string) as HttpSummary;
    const v = JSON.parse(await readFile(vllmFile, 'utf8')) as Record<string, unknown>;

    for (const key of [...VLLM_SETUP_KEYS, ...VLLM_RESULT_KEYS, ...['ttft', 'tpot', 'itl', 'e2el'].flatMap((m) => metricKeys(m, [99]))]) expect(v).toHaveProperty([key]);
    for (const key of DETAILED_ONLY) expect(v).not.toHaveProperty([key]);
    expect(v).toMatchObject({ backend: 'openai-chat', model_id: 'stub', num_prompts: 400, request_rate: 40, burstiness: 1, max_concurrency: null, rtfx: 0 });
    expect(v.completed).toBe(summary.requests.completed);
    expect(v.total_output_tokens).toBe(summary.tokens.output);
    expect(v.latencies).toHaveLength(400);
    expect(v.queue_times).toEqual(new Array(400).fill(0));
    expect(v.duration).toBe(summary.window_s);

    const L = summary.latency_ms;
    within(summary.requests_per_s, v.request_throughput);
    within(summary.output_tokens_per_s, v.output_throughput);
    within(L.ttft.raw.p50, v.median_ttft_ms);
    within(L.ttft.raw.mean, v.mean_ttft_ms);
    within(L.ttft.raw.p99, v.p99_ttft_ms);
    within(L.tpot.raw.p50, v.median_tpot_ms);
    within(L.tpot.raw.p99, v.p99_tpot_ms);
    within(L.itl.raw.p50, v.median_itl_ms);
    within(L.itl.raw.p99, v.p99_itl_ms);
    within(L.e2e.raw.mean, v.mean_e2el_ms);
    within(L.e2e.raw.p50, v.median_e2el_ms);
    within(summary.goodput?.request_goodput ?? null, v.request_goodput);
    // ITL is per chunk of two tokens, TPOT per token: the names mean different figures, as in vLLM.
    expect((v.median_itl_ms as number) / (v.median_tpot_ms as number)).toBeGreaterThan(1.8);

    // request_goodput recomputed from requests.jsonl as vLLM computes it: timed from the send, to the
    // first and the last output chunk; TPOT over tokens - 1 (0 for one token); each at or under its bound.
    const records = (await readFile(join(dir, 'requests.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as RequestRecord);
    expect(records).toHaveLength(400);
    let vllmGood = 0;
    let ownGood = 0;
    for (const r of records) {
      if (r.error !== null || r.first_token_s === null || r.last_token_s === null || r.dispatched_s === null || r.end_s === null) continue;
      const ttft = (r.first_token_s - r.dispatched_s) * 1000;
      const latency = (r.last_token_s - r.dispatched_s) * 1000;
      const tpot = r.tokens > 1 ? (latency - ttft) / (r.tokens - 1) : 0;
      if (ttft <= 300 && tpot <= 50) vllmGood++;
      // Ours: the same bounds on the summary's own TTFT and TPOT.
      const ownTpot = r.tokens >= 2 ? ((r.last_token_s - r.first_token_s) * 1000) / (r.tokens - 1) : 0;
      if (ttft <= 300 && ownTpot <= 50) ownGood++;
    }
    expect(vllmGood).toBeGreaterThan(40);
    expect(vllmGood).toBeLessThan(360);
    expect(v.request_goodput as number).toBeCloseTo(vllmGood / summary.window_s, 9);
    expect(summary.goodput).toMatchObject({ bounds: { ttft: 300, tpot: 50 }, good: ownGood });
    expect(summary.goodput?.share).toBeCloseTo(ownGood / summary.requests.completed, 5);
  });

  it('--max-concurrency in an open loop: the stub never sees more in flight; the wait is client_queue, and vLLM keys it as client_queue_time', async () => {
    stub ??= await startHttpStub({ kind: 'variable-response', first_chunk_ms: 280, first_chunk_spread: 0.3, inter_token_ms: 5, output_len_mean: 40, output_len_spread: 0.3, stream_interval: 2 });
    const capped = await startHttpStub({ kind: 'variable-response', first_chunk_ms: 100, first_chunk_spread: 0, inter_token_ms: 1, output_len_mean: 5, output_len_spread: 0 });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'vllm-capped-'));
      // 100 requests/s against a cap of 4 in flight, each about 105 ms: about 38/s go, the rest wait.
      const { code, stdout, stderr } = await runCli(['http', '--url', capped.url, '--rate', '100', '--arrivals', 'constant', '--requests', '60', '--max-concurrency', '4', '--vllm-result', join(dir, 'vllm.json'), '--output', dir, '--json', '--allow-unqualified'], 60_000);
      expect(stderr).not.toMatch(/^error/m);
      expect(code).toBe(0);
      const summary = JSON.parse(stdout.trim().split('\n').pop() as string) as HttpSummary;
      expect(capped.stats().active_max).toBe(4);
      expect(summary.load.max_concurrency).toBe(4);
      // Timed from the end of its wait, each TTFT is the server's 100 ms, not the queue's growing wait
      // (over 500 ms below); the margin is for the cores this file shares (153 ms seen on a clean clone).
      expect(summary.latency_ms.ttft.raw.p99 as number).toBeLessThan(400);
      expect(summary.latency_ms.client_queue.raw.count).toBe(60);
      expect(summary.latency_ms.client_queue.raw.max as number).toBeGreaterThan(500);
      expect(summary.latency_ms.e2e_including_queue.raw.max as number).toBeGreaterThan((summary.latency_ms.client_queue.raw.max as number) + 100);
      const v = JSON.parse(await readFile(join(dir, 'vllm.json'), 'utf8')) as Record<string, unknown>;
      expect(v.max_concurrency).toBe(4);
      for (const key of [...metricKeys('client_queue_time', [99]), ...metricKeys('e2el_including_client_queue', [99])]) expect(v).toHaveProperty([key]);
      within(summary.latency_ms.client_queue.raw.p50, v.median_client_queue_time_ms);
      expect(v.max_concurrent_requests).toBe(4);
    } finally {
      await capped.close();
    }
  });
});
