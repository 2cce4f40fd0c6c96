/**
 * The latency histograms a vLLM server exports at `GET /metrics` (vLLM's `PrometheusStatLogger`:
 * `vllm:time_to_first_token_seconds` and `vllm:e2e_request_latency_seconds`, labelled with
 * `model_name`), observed by the stub on its own clock from each request's arrival, so a client's
 * `--server-metrics` has a server's view to read.
 */

/** vLLM's TTFT buckets (its Prometheus stat logger), seconds. */
export const VLLM_TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];
/** Request latency buckets, seconds. */
export const VLLM_E2E_BUCKETS_S = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0];

export class PromHistogram {
  private readonly counts: number[];
  private count = 0;
  private sum = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: number[],
  ) {
    this.counts = buckets.map(() => 0);
  }

  observe(seconds: number): void {
    this.count++;
    this.sum += seconds;
    for (let i = 0; i < this.buckets.length; i++) if (seconds <= this.buckets[i]) this.counts[i]++;
  }

  /** Its lines in the Prometheus text format, with `labels` (already formatted, `model_name="stub"`). */
  text(labels: string): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket{${labels},le="${Number.isInteger(le) ? le.toFixed(1) : String(le)}"} ${this.counts[i]}.0`));
    lines.push(`${this.name}_bucket{${labels},le="+Inf"} ${this.count}.0`, `${this.name}_count{${labels}} ${this.count}.0`, `${this.name}_sum{${labels}} ${this.sum}`);
    return lines.join('\n');
  }
}
