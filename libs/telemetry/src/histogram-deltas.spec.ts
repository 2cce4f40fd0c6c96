import { bucketDelta, bucketQuantile, bucketsOf } from './histogram-deltas';
import { parsePromText } from './prom-text';

const exposition = (fast: number, slow: number, old: number) => `# HELP vllm:omni_audio_ttfp_s TTFP
# TYPE vllm:omni_audio_ttfp_s histogram
vllm:omni_audio_ttfp_s_bucket{model_name="m",stage="1",replica="0",le="0.1"} 0
vllm:omni_audio_ttfp_s_bucket{model_name="m",stage="1",replica="0",le="0.2"} ${fast}
vllm:omni_audio_ttfp_s_bucket{model_name="m",stage="1",replica="0",le="0.5"} ${fast + slow}
vllm:omni_audio_ttfp_s_bucket{model_name="m",stage="1",replica="0",le="5.0"} ${fast + slow + old}
vllm:omni_audio_ttfp_s_bucket{model_name="m",stage="1",replica="0",le="+Inf"} ${fast + slow + old}
vllm:omni_audio_ttfp_s_count{model_name="m",stage="1",replica="0"} ${fast + slow + old}
vllm:omni_audio_ttfp_s_sum{model_name="m",stage="1",replica="0"} 1.5e3
`;

describe('parsePromText', () => {
  it('reads names with colons, labels with escapes, +Inf and exponents; counts what it cannot read', () => {
    const p = parsePromText('# TYPE a:b counter\na:b{x="q\\"uo\\\\te",le="+Inf"} 1.5e3 1700000000\nbad line here\nc +Inf\n');
    expect(p.types.get('a:b')).toBe('counter');
    expect(p.samples).toEqual([
      { name: 'a:b', labels: { x: 'q"uo\\te', le: '+Inf' }, value: 1500 },
      { name: 'c', labels: {}, value: Infinity },
    ]);
    expect(p.unreadable).toBe(1);
  });
});

describe('bucket deltas and quantiles', () => {
  it('takes percentiles of what happened between two scrapes, not of what the server held before', () => {
    // Before the run the server already held 1,000 slow answers (in 0.5-5 s); the run adds
    // 40 in (0.1, 0.2] and 40 in (0.2, 0.5].
    const before = bucketsOf(parsePromText(exposition(0, 0, 1000)), 'vllm:omni_audio_ttfp_s');
    const after = bucketsOf(parsePromText(exposition(40, 40, 1000)), 'vllm:omni_audio_ttfp_s');
    if (!after) throw new Error('no buckets');
    const run = bucketDelta(before, after);
    expect(run.count).toBe(80);
    // rank 40 ends the (0.1, 0.2] bucket; rank 72 is 32/40 into (0.2, 0.5]; rank 79.2 is 39.2/40 in.
    expect(bucketQuantile(run, 0.5)).toBeCloseTo(0.2, 9);
    expect(bucketQuantile(run, 0.9)).toBeCloseTo(0.44, 9);
    expect(bucketQuantile(run, 0.99)).toBeCloseTo(0.494, 9);
    // Without the delta the old answers would dominate.
    expect(bucketQuantile(after, 0.5)).toBeGreaterThan(0.5);
  });

  it('pools label sets, takes a server restart (counts going down) as a fresh start, and says nothing of an empty window', () => {
    const two = parsePromText(exposition(10, 0, 0) + exposition(10, 0, 0).replace(/replica="0"/g, 'replica="1"'));
    expect(bucketsOf(two, 'vllm:omni_audio_ttfp_s')?.count).toBe(20);
    const high = bucketsOf(parsePromText(exposition(50, 0, 0)), 'vllm:omni_audio_ttfp_s');
    const low = bucketsOf(parsePromText(exposition(5, 0, 0)), 'vllm:omni_audio_ttfp_s');
    if (!low) throw new Error('no buckets');
    expect(bucketDelta(high, low).count).toBe(5);
    expect(bucketQuantile(bucketDelta(low, low), 0.5)).toBeNull();
  });

  it('gives the highest finite bound for a rank in the +Inf bucket', () => {
    const p = parsePromText('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 10\nh_count 10\n');
    const b = bucketsOf(p, 'h');
    if (!b) throw new Error('no buckets');
    expect(bucketQuantile(b, 0.99)).toBe(1);
  });
});
