import { vllmRealtimeUrl } from '@duplex-bench/protocol';
import {
  authHeaders,
  checkPacket,
  connectionSettings,
  DEFAULT_UNIT_TIMEOUT_MS,
  dialectConfig,
  dialectRecord,
  redactArgv,
  sessionUrl,
  withoutSecrets,
  type DialectOptions,
} from './dialect-options';

const ADMISSION = { retries: 3, backoff_ms: 250, max_backoff_ms: 1000 };

/** The settings of a run, `over` what differs. */
const options = (over: Partial<DialectOptions> = {}): DialectOptions => ({
  protocol: 'openai',
  commit_given: false,
  no_playback_ack: false,
  turn_detection: 'none',
  commit_every_s: 1,
  sample_rate: 16000,
  packet_ms: 80,
  packet_ms_given: false,
  admission: ADMISSION,
  close_timeout_ms: 5000,
  ...over,
});

describe('checkPacket', () => {
  it('takes a packet that holds a whole number of samples at the input rate', () => {
    expect(() => checkPacket(80, 16000)).not.toThrow();
    expect(() => checkPacket(0.5, 16000)).not.toThrow(); // 8 samples
    expect(() => checkPacket(20, 22050)).not.toThrow(); // 441 samples
  });

  it('refuses one that splits a sample, with a coded error naming --packet-ms and the rate', () => {
    // 10 ms at 22,050 Hz is 220.5 samples.
    expect(() => checkPacket(10, 22050)).toThrow(expect.objectContaining({ name: 'RunInputError', code: 'BAD_PACKET_MS', message: '--packet-ms 10 is not a whole number of samples at 22050 Hz' }));
    expect(() => checkPacket(0.01, 16000)).toThrow(expect.objectContaining({ code: 'BAD_PACKET_MS' }));
  });
});

describe('dialectConfig', () => {
  it('gives a native server nothing more than its dialect', () => {
    expect(dialectConfig(options({ protocol: 'native', commit_every_s: 3 }), 80, 24000)).toEqual({ protocol: 'native' });
  });

  it('openai: commits every --commit-every-s as a whole number of packets, at least one', () => {
    expect(dialectConfig(options({ commit_every_s: 1 }), 80, 24000)).toEqual({ protocol: 'openai', turn_detection: 'none', commit_every_packets: 13, output_sample_rate: 24000 });
    // 0.2 s of 80 ms packets is 2.5: rounded, not floored.
    expect(dialectConfig(options({ commit_every_s: 0.2 }), 80)).toMatchObject({ commit_every_packets: 3 });
    // Shorter than one packet: every packet.
    expect(dialectConfig(options({ commit_every_s: 0.01 }), 80)).toMatchObject({ commit_every_packets: 1 });
    expect(dialectConfig(options({ turn_detection: 'semantic_vad' }), 80)).toMatchObject({ turn_detection: 'semantic_vad' });
  });

  it('vllm-omni without --commit-every-s commits only at the end of the input; with it, as openai does', () => {
    const o = options({ protocol: 'vllm-omni', model: 'm', commit_every_s: 0.5 });
    expect(dialectConfig(o, 100, 22050)).toEqual({ protocol: 'vllm-omni', model: 'm', turn_detection: 'none', commit_every_packets: Infinity, output_sample_rate: 22050 });
    expect(dialectConfig({ ...o, commit_given: true }, 100)).toMatchObject({ commit_every_packets: 5 });
  });

  it('vllm-omni: passes the playback-ack test flag, the reference voice and the raw session fields only when given', () => {
    const bare = dialectConfig(options({ protocol: 'vllm-omni' }), 80);
    expect(bare).not.toHaveProperty('no_playback_ack');
    expect(bare).not.toHaveProperty('ref_audio');
    expect(bare).not.toHaveProperty('session_extra');
    const full = dialectConfig(options({ protocol: 'vllm-omni', no_playback_ack: true, ref_audio: 'data:audio/wav;base64,AA==', session_extra: { voice: 'x' } }), 80);
    expect(full).toMatchObject({ no_playback_ack: true, ref_audio: 'data:audio/wav;base64,AA==', session_extra: { voice: 'x' } });
  });

  it('refuses semantic_vad for vllm-omni with a coded error', () => {
    expect(() => dialectConfig(options({ protocol: 'vllm-omni', turn_detection: 'semantic_vad' }), 80)).toThrow(
      expect.objectContaining({ code: 'BAD_TURN_DETECTION', message: '--turn-detection semantic_vad is for --protocol openai' }),
    );
  });
});

describe('sessionUrl and authHeaders', () => {
  it("adds vLLM-Omni's query to its URL and leaves the others' alone", () => {
    expect(sessionUrl(options(), 'ws://h:1/v1/realtime')).toBe('ws://h:1/v1/realtime');
    expect(sessionUrl(options({ protocol: 'native' }), 'ws://h:1/x')).toBe('ws://h:1/x');
    const url = sessionUrl(options({ protocol: 'vllm-omni', model: 'omni' }), 'ws://h:1');
    expect(url).toBe(vllmRealtimeUrl('ws://h:1', 'omni'));
    expect(new URL(url).searchParams.get('model')).toBe('omni');
  });

  it('sends a bearer key when there is one, and no header at all otherwise', () => {
    expect(authHeaders(options({ api_key: 'sk-1' }))).toEqual({ Authorization: 'Bearer sk-1' });
    expect(authHeaders(options())).toBeUndefined();
    expect(authHeaders(options({ api_key: '' }))).toBeUndefined();
  });
});

describe('connectionSettings', () => {
  const run = (over: Partial<DialectOptions> & { output_sample_rate_given?: boolean } = {}) =>
    connectionSettings({ url: 'ws://h:1/v1/realtime', connect_timeout_ms: 3000, drain_timeout_ms: 7000, output_sample_rate: 24000, output_sample_rate_given: false, ...options(over), ...over }, 80);

  it('carries the URL, dialect, key, bounds and rates every session of the run shares', () => {
    expect(run({ api_key: 'k' })).toEqual({
      url: 'ws://h:1/v1/realtime',
      dialect: { protocol: 'openai', turn_detection: 'none', commit_every_packets: 13, output_sample_rate: undefined },
      headers: { Authorization: 'Bearer k' },
      connect_timeout_ms: 3000,
      close_timeout_ms: 5000,
      admission: ADMISSION,
      drain_timeout_ms: 7000,
      output_sample_rate: 24000,
      output_sample_rate_given: false,
    });
  });

  it("hands the dialect the output rate only when the user gave it (a server's grant decides otherwise)", () => {
    expect(run({ output_sample_rate_given: true }).dialect).toMatchObject({ output_sample_rate: 24000 });
  });

  it('bounds the handshake only when asked, and gives lockstep its unit bound, the default when none was given', () => {
    expect(run()).not.toHaveProperty('handshake_timeout_ms');
    expect(run({ handshake_timeout_ms: 1500 }).handshake_timeout_ms).toBe(1500);
    expect(run({ protocol: 'native' })).not.toHaveProperty('lockstep');
    expect(run({ protocol: 'native', pacing: 'realtime' })).not.toHaveProperty('lockstep');
    expect(run({ protocol: 'native', pacing: 'lockstep' }).lockstep).toEqual({ unit_timeout_ms: DEFAULT_UNIT_TIMEOUT_MS });
    expect(run({ protocol: 'native', pacing: 'lockstep', unit_timeout_ms: 2500 }).lockstep).toEqual({ unit_timeout_ms: 2500 });
  });
});

describe('redactArgv and withoutSecrets', () => {
  const argv = ['run', '--api-key', 'sk-secret', '--url', 'ws://h', '--api-key=sk-two', '--sessions', '4'];

  it('replaces the key in both spellings and keeps every other argument in place', () => {
    expect(redactArgv(argv)).toEqual(['run', '--api-key', '[redacted]', '--url', 'ws://h', '--api-key=[redacted]', '--sessions', '4']);
  });

  it('drops the key flag and its value for a launched child', () => {
    expect(withoutSecrets(argv)).toEqual(['run', '--url', 'ws://h', '--sessions', '4']);
  });

  it('leaves a flag that only starts like the key flag, and a command line with no key, as they are', () => {
    expect(redactArgv(['--api-keys', 'x', '--url', 'y'])).toEqual(['--api-keys', 'x', '--url', 'y']);
    expect(withoutSecrets(['a', 'b'])).toEqual(['a', 'b']);
  });
});

describe('dialectRecord', () => {
  const record = (over: Partial<DialectOptions> = {}) => dialectRecord({ ...options(over), output_sample_rate: 24000 });

  it('records whether a key was sent, never the key', () => {
    const r = record({ api_key: 'sk-secret' });
    expect(r.bearer_key_sent).toBe(true);
    expect(JSON.stringify(r)).not.toContain('sk-secret');
    expect(record().bearer_key_sent).toBe(false);
  });

  it('records the reference voice by its file and its length, never its data', () => {
    const r = record({ protocol: 'vllm-omni', ref_audio: 'data:audio/wav;base64,QUJD', ref_audio_file: 'voice.wav' });
    expect(r.ref_audio).toEqual({ file: 'voice.wav', data_url_chars: 'data:audio/wav;base64,QUJD'.length });
    expect(JSON.stringify(r)).not.toContain('QUJD');
    expect(record()).not.toHaveProperty('ref_audio');
  });

  it('states the commit cadence under manual turns: openai always commits on it, vllm-omni only when given', () => {
    expect(record()).toMatchObject({ turn_detection: 'none', commit_every_s: 1 });
    expect(record({ protocol: 'vllm-omni' })).toMatchObject({ commit_every_s: 'end of input only' });
    expect(record({ protocol: 'vllm-omni', commit_given: true })).toMatchObject({ commit_every_s: 1 });
    expect(record({ turn_detection: 'server_vad' })).not.toHaveProperty('commit_every_s');
  });

  it('a native run records its pacing (realtime unless lockstep) and no turn detection', () => {
    const realtime = record({ protocol: 'native' });
    expect(realtime).toMatchObject({ protocol: 'native', pacing: 'realtime' });
    expect(realtime).not.toHaveProperty('turn_detection');
    expect(realtime).not.toHaveProperty('unit_timeout_ms');
    expect(record({ protocol: 'native', pacing: 'lockstep' })).toMatchObject({ pacing: 'lockstep', unit_timeout_ms: DEFAULT_UNIT_TIMEOUT_MS });
    expect(record()).not.toHaveProperty('pacing');
  });

  it('records the admission retries as max_admission_attempts beside the whole policy, and the rates', () => {
    expect(record({ handshake_timeout_ms: 900 })).toMatchObject({
      input_sample_rate: 16000,
      output_sample_rate_assumed: 24000,
      max_admission_attempts: 3,
      admission: ADMISSION,
      handshake_timeout_ms: 900,
      close_timeout_ms: 5000,
    });
  });
});
