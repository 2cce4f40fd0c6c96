import { PromHistogram, VLLM_E2E_BUCKETS_S, VLLM_TTFT_BUCKETS_S } from './server-histograms';

/** The sample lines of a text exposition: name with labels → value. */
function samples(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), line.slice(at + 1));
  }
  return out;
}

describe('PromHistogram', () => {
  it('writes HELP and TYPE, then a cumulative bucket per bound, +Inf, count and sum, each with the labels', () => {
    const h = new PromHistogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', [0.1, 0.5, 1]);
    const lines = h.text('model_name="stub"').split('\n');
    expect(lines.slice(0, 2)).toEqual(['# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.', '# TYPE vllm:time_to_first_token_seconds histogram']);
    expect(lines.slice(2)).toEqual([
      'vllm:time_to_first_token_seconds_bucket{model_name="stub",le="0.1"} 0.0',
      'vllm:time_to_first_token_seconds_bucket{model_name="stub",le="0.5"} 0.0',
      'vllm:time_to_first_token_seconds_bucket{model_name="stub",le="1.0"} 0.0',
      'vllm:time_to_first_token_seconds_bucket{model_name="stub",le="+Inf"} 0.0',
      'vllm:time_to_first_token_seconds_count{model_name="stub"} 0.0',
      'vllm:time_to_first_token_seconds_sum{model_name="stub"} 0',
    ]);
  });

  it('counts an observation in every bucket whose bound it does not exceed (a value on a bound is in it), and in +Inf past the last', () => {
    const h = new PromHistogram('h', 'help', [0.1, 0.5, 1]);
    for (const s of [0.05, 0.1, 0.3, 0.7, 2]) h.observe(s);
    const got = samples(h.text('m="x"'));
    expect(got.get('h_bucket{m="x",le="0.1"}')).toBe('2.0');
    expect(got.get('h_bucket{m="x",le="0.5"}')).toBe('3.0');
    expect(got.get('h_bucket{m="x",le="1.0"}')).toBe('4.0');
    expect(got.get('h_bucket{m="x",le="+Inf"}')).toBe('5.0');
    expect(got.get('h_count{m="x"}')).toBe('5.0');
    expect(Number(got.get('h_sum{m="x"}'))).toBeCloseTo(3.15, 12);
  });

  it("has strictly ascending bucket bounds, as the text format's cumulative buckets need", () => {
    for (const buckets of [VLLM_TTFT_BUCKETS_S, VLLM_E2E_BUCKETS_S]) expect(buckets.every((b, i) => i === 0 || b > buckets[i - 1])).toBe(true);
  });
});
