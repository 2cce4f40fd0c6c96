import { UsageError } from '@duplex-bench/cli';
import { parseServeOptions } from './serve-options';

describe('mock serve flags', () => {
  it('takes the native model profiles, leaving their timings to the profile unless given', () => {
    expect(parseServeOptions(['--profile', 'nemotron'])).toMatchObject({ protocol: 'native', profile: 'nemotron', model: {}, unit_ms: undefined, output_sample_rate: undefined });
    expect(parseServeOptions(['--profile', 'minicpmo', '--ttfp-ms', '150', '--turn-every-s', '3']).model).toEqual({ ttfp_ms: 150, turn_every_s: 3 });
  });

  it('keeps --profile model for the openai dialect and refuses it for the native one', () => {
    expect(parseServeOptions(['--protocol', 'openai', '--profile', 'model']).profile).toBe('model');
    expect(() => parseServeOptions(['--profile', 'model'])).toThrow(new UsageError('--profile model is for --protocol openai; the native profiles are append-echo, nemotron and minicpmo'));
  });

  it('refuses fewer than 2 native replies per unit: every unit needs its audio and its sglang.unit.done', () => {
    expect(() => parseServeOptions(['--replies-per-append', '1'])).toThrow(/at least 2 for the native dialect/);
    expect(parseServeOptions(['--protocol', 'openai', '--replies-per-append', '1']).replies_per_append).toBe(1);
  });

  it('ends with its parent unless --outlive-parent, for every protocol', () => {
    expect(parseServeOptions([]).outlive_parent).toBe(false);
    expect(parseServeOptions(['--outlive-parent']).outlive_parent).toBe(true);
    expect(parseServeOptions(['--protocol', 'http', '--outlive-parent']).outlive_parent).toBe(true);
  });
});
