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

  it('takes the GPU test double only with --metrics-port, and only when a --gpu-* flag is given', () => {
    expect(parseServeOptions(['--profile', 'nemotron', '--metrics-port', '0', '--gpu-base-mib', '2000', '--gpu-mib-per-session', '1000']).gpu).toEqual({ base_mib: 2000, mib_per_session: 1000, util_per_session: 0 });
    expect(parseServeOptions(['--profile', 'nemotron', '--metrics-port', '0']).gpu).toBeUndefined();
    expect(() => parseServeOptions(['--profile', 'nemotron', '--gpu-util-per-session', '8'])).toThrow('--gpu-util-per-session goes with --metrics-port (the GPU gauges are served on /metrics)');
  });

  it('ends with its parent unless --outlive-parent, for every protocol', () => {
    expect(parseServeOptions([]).outlive_parent).toBe(false);
    expect(parseServeOptions(['--outlive-parent']).outlive_parent).toBe(true);
    expect(parseServeOptions(['--protocol', 'http', '--outlive-parent']).outlive_parent).toBe(true);
  });
});

describe('mock serve behaviour flags', () => {
  it('turns behaviour mode on only when a knob is given, with only what was given', () => {
    expect(parseServeOptions(['--profile', 'nemotron']).behaviour).toBeUndefined();
    expect(parseServeOptions(['--profile', 'nemotron', '--capacity-sessions', '4']).behaviour).toBeUndefined();
    expect(parseServeOptions(['--profile', 'nemotron', '--respond-after-ms', '400', '--yield-on-backchannel']).behaviour).toEqual({ respond_after_ms: 400, yield_on_backchannel: true });
    expect(
      parseServeOptions(['--protocol', 'openai', '--profile', 'model', '--answer-ms', '2000', '--stop-after-ms', '150', '--takeover-after-ms', '800', '--conversation', 'default']).behaviour,
    ).toEqual({ answer_ms: 2000, stop_after_ms: 150, takeover_after_ms: 800, conversation: 'default' });
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--respond-after-ms', '300']).behaviour).toEqual({ respond_after_ms: 300 });
  });

  it('takes --leading-silence-ms for a model mock without behaviour flags', () => {
    expect(parseServeOptions(['--profile', 'nemotron', '--leading-silence-ms', '300']).leading_silence_ms).toBe(300);
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--leading-silence-ms', '0']).leading_silence_ms).toBe(0);
    expect(() => parseServeOptions(['--leading-silence-ms', '300'])).toThrow(/--leading-silence-ms is for a model mock/);
    expect(() => parseServeOptions(['--profile', 'nemotron', '--leading-silence-ms', '300', '--answer-ms', '900'])).toThrow(/without behaviour flags/);
  });

  it('takes the camera flags where their servers take frames', () => {
    expect(parseServeOptions(['--profile', 'minicpmo', '--grant-image', '--frame-cost-ms', '40']).images).toEqual({ frame_cost_ms: 40 });
    expect(parseServeOptions(['--grant-image', '--image-max-per-unit', '2']).images).toEqual({ max_per_unit: 2 });
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--image-items']).openai.image_items).toBe(true);
    expect(() => parseServeOptions(['--frame-cost-ms', '40'])).toThrow('--frame-cost-ms needs --grant-image');
    expect(() => parseServeOptions(['--protocol', 'openai', '--grant-image'])).toThrow(/--grant-image is for --protocol native/);
    expect(() => parseServeOptions(['--protocol', 'openai', '--image-items'])).toThrow('--image-items is for --flavor vllm-omni');
  });

  it('takes --turn-based for the vllm-omni flavour only', () => {
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--turn-based']).openai).toMatchObject({ flavor: 'vllm-omni', turn_based: true });
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni']).openai.turn_based).toBeUndefined();
    expect(() => parseServeOptions(['--protocol', 'openai', '--turn-based'])).toThrow('--turn-based is for --flavor vllm-omni');
    expect(() => parseServeOptions(['--turn-based'])).toThrow('--turn-based is for --protocol openai');
  });

  it('takes --send-lag-ms for the vllm-omni flavour only, and --created-at-first-audio as what it always does', () => {
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--send-lag-ms', '500']).openai.send_lag_ms).toBe(500);
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni']).openai.send_lag_ms).toBeUndefined();
    expect(() => parseServeOptions(['--protocol', 'openai', '--send-lag-ms', '500'])).toThrow('--send-lag-ms is for --flavor vllm-omni');
    expect(() => parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--send-lag-ms', '-1'])).toThrow('--send-lag-ms');
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--created-at-first-audio']).openai.flavor).toBe('vllm-omni');
  });

  it('refuses the knobs for append-echo and for the http and time servers', () => {
    expect(() => parseServeOptions(['--respond-after-ms', '400'])).toThrow(/--respond-after-ms is for a model mock/);
    expect(() => parseServeOptions(['--protocol', 'http', '--answer-ms', '400'])).toThrow(/not for --protocol http/);
    expect(() => parseServeOptions(['--protocol', 'time', '--conversation', 'default'])).toThrow(/not for --protocol time/);
    expect(() => parseServeOptions(['--profile', 'nemotron', '--answer-ms', '0'])).toThrow(UsageError);
  });

  it('takes --fault where the dialect has it, after --fault-after appends (default 10)', () => {
    expect(parseServeOptions(['--fault', 'oversized_frame']).fault).toEqual({ action: 'oversized_frame', after_appends: 10 });
    expect(parseServeOptions(['--protocol', 'openai', '--flavor', 'vllm-omni', '--fault', 'no_session_closed', '--fault-after', '0']).fault).toEqual({ action: 'no_session_closed', after_appends: 0 });
    expect(parseServeOptions([]).fault).toBeUndefined();
    expect(() => parseServeOptions(['--protocol', 'openai', '--fault', 'no_session_closed'])).toThrow(/not defined for the openai mock/);
    expect(() => parseServeOptions(['--protocol', 'openai', '--fault', 'duplicate_seq'])).toThrow(UsageError);
    expect(parseServeOptions(['--protocol', 'openai', '--vllm-extensions', '--fault', 'duplicate_seq']).fault?.action).toBe('duplicate_seq');
    expect(() => parseServeOptions(['--fault', 'nonsense'])).toThrow(/--fault must be one of/);
    expect(() => parseServeOptions(['--fault-after', '3'])).toThrow('--fault-after needs --fault');
    expect(() => parseServeOptions(['--protocol', 'http', '--fault', 'close'])).toThrow(/not for --protocol http/);
  });
});
