import { UsageError } from '@duplex-bench/cli';
import { dialectConfig, redactArgv, withoutSecrets } from '../dialect-options';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dialectWarnings, parseDialectOptions } from './dialect-settings';

const flags = (f: Record<string, unknown> = {}) => ({ protocol: 'openai', 'sample-rate': 16000, ...f });

describe('dialect options', () => {
  it('takes --video for native and vllm-omni, --video-fps only with it, and hands the frames to the flow once read', () => {
    expect(parseDialectOptions(flags({ protocol: 'native', video: '/frames', 'video-fps': 2 }), {})).toMatchObject({ video_path: '/frames', video_fps: 2 });
    expect(() => parseDialectOptions(flags({ video: '/frames' }), {})).toThrow(new UsageError('--video is for --protocol native or vllm-omni'));
    expect(() => parseDialectOptions(flags({ protocol: 'native', 'video-fps': 2 }), {})).toThrow(new UsageError('--video-fps needs --video'));
    // A recording's dataset may hold the samples' own cameras, read at --video-fps.
    expect(parseDialectOptions(flags({ protocol: 'native', 'video-fps': 2 }), {}, { dataset: true })).toMatchObject({ video_fps: 2 });
    const video = { source: '/frames', base64: [Buffer.from('/9j/')], bytes: [3], fps: null };
    const native = parseDialectOptions(flags({ protocol: 'native' }), {});
    expect(dialectConfig({ ...native, video }, 80)).toEqual({ protocol: 'native', video });
    expect(dialectConfig({ ...parseDialectOptions(flags({ protocol: 'vllm-omni' }), {}), video }, 80)).toMatchObject({ protocol: 'vllm-omni', video });
  });

  it("waits for a full server with each client's budget, and takes vllm-omni's voice, raw fields and bounds", () => {
    expect(parseDialectOptions(flags({ protocol: 'native' }), {}).admission).toEqual({ retries: 3, backoff_ms: 250, max_backoff_ms: 250 });
    const v = parseDialectOptions(flags({ protocol: 'vllm-omni' }), {});
    expect(v.admission).toEqual({ retries: 12, backoff_ms: 250, max_backoff_ms: 5000 });
    expect(v).toMatchObject({ handshake_timeout_ms: 30_000, close_timeout_ms: 20_000 });
    expect(parseDialectOptions(flags({ protocol: 'native' }), {})).toMatchObject({ close_timeout_ms: 5000 });
    expect(parseDialectOptions(flags({ protocol: 'vllm-omni', 'admission-retries': 0, 'close-timeout-s': 2 }), {})).toMatchObject({ admission: { retries: 0 }, close_timeout_ms: 2000 });
    const dir = mkdtempSync(join(tmpdir(), 'voice-'));
    const wav = join(dir, 'v.wav');
    writeFileSync(wav, Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE'), Buffer.alloc(8)]));
    expect(parseDialectOptions(flags({ protocol: 'vllm-omni', 'ref-audio': wav }), {}).ref_audio).toMatch(/^data:audio\/wav;base64,UklGR/);
    const notWav = join(dir, 'v.txt');
    writeFileSync(notWav, 'hello there, not a wav');
    const refuse = (f: Record<string, unknown>) => expect(() => parseDialectOptions(flags(f), {})).toThrow(UsageError);
    refuse({ protocol: 'vllm-omni', 'ref-audio': notWav });
    refuse({ protocol: 'vllm-omni', 'ref-audio': join(dir, 'missing.wav') });
    refuse({ protocol: 'native', 'ref-audio': wav });
    refuse({ protocol: 'vllm-omni', 'session-extra': '[1]' });
    refuse({ protocol: 'vllm-omni', 'session-extra': '{nope' });
    expect(parseDialectOptions(flags({ protocol: 'vllm-omni', 'session-extra': '{"extra_body":{"native_duplex":true}}' }), {}).session_extra).toEqual({ extra_body: { native_duplex: true } });
  });

  it('takes the key from --api-key, else from OPENAI_API_KEY for the openai dialect only', () => {
    expect(parseDialectOptions(flags({ 'api-key': 'k1' }), { OPENAI_API_KEY: 'k2' }).api_key).toBe('k1');
    expect(parseDialectOptions(flags(), { OPENAI_API_KEY: 'k2' }).api_key).toBe('k2');
    expect(parseDialectOptions(flags({ protocol: 'native' }), { OPENAI_API_KEY: 'k2' }).api_key).toBeUndefined();
    expect(parseDialectOptions(flags(), { OPENAI_API_KEY: '' }).api_key).toBeUndefined();
  });

  it('takes --pacing lockstep for the native dialect only, with its unit bound, and records it', () => {
    const refuse = (f: Record<string, unknown>) => expect(() => parseDialectOptions(flags(f), {})).toThrow(UsageError);
    refuse({ pacing: 'lockstep' });
    refuse({ protocol: 'vllm-omni', pacing: 'realtime' });
    refuse({ protocol: 'native', 'unit-timeout-s': 2 });
    expect(parseDialectOptions(flags({ protocol: 'native', pacing: 'lockstep' }), {})).toMatchObject({ pacing: 'lockstep', unit_timeout_ms: 10_000 });
    expect(parseDialectOptions(flags({ protocol: 'native', pacing: 'lockstep', 'unit-timeout-s': 2.5 }), {}).unit_timeout_ms).toBe(2500);
    expect(parseDialectOptions(flags({ protocol: 'native', pacing: 'realtime' }), {}).pacing).toBeUndefined();
  });

  it('refuses openai-only flags and other rates with the native dialect, and a commit period with server VAD', () => {
    const refuse = (f: Record<string, unknown>) => expect(() => parseDialectOptions(flags(f), {})).toThrow(UsageError);
    refuse({ protocol: 'native', 'turn-detection': 'none' });
    refuse({ protocol: 'native', 'sample-rate': 24000 });
    refuse({ 'commit-every-s': 1 });
    refuse({ 'api-key': 'has space' });
    expect(parseDialectOptions(flags({ 'sample-rate': 24000, 'turn-detection': 'none', 'commit-every-s': 2 }), {})).toMatchObject({
      sample_rate: 24000,
      turn_detection: 'none',
      commit_every_s: 2,
      packet_ms_given: false,
    });
  });

  it('streams 24,000 Hz to openai unless told otherwise, and warns once of another rate; 16,000 Hz to native and vllm-omni', () => {
    const rate = (f: Record<string, unknown>) => parseDialectOptions({ protocol: 'openai', ...f }, {});
    expect(rate({}).sample_rate).toBe(24000);
    expect(dialectWarnings(rate({}))).toEqual([]);
    expect(rate({ protocol: 'native' }).sample_rate).toBe(16000);
    expect(rate({ protocol: 'vllm-omni' }).sample_rate).toBe(16000);
    expect(dialectWarnings(rate({ protocol: 'vllm-omni', 'sample-rate': 24000 }))).toEqual([]);
    const other = rate({ 'sample-rate': 16000 });
    expect(other.sample_rate).toBe(16000);
    expect(dialectWarnings(other)).toEqual(['warning: --sample-rate 16000: OpenAI itself accepts only 24000 Hz for audio/pcm input; sent as asked, for a server that takes it']);
  });

  it('takes semantic_vad for openai only, with a usage error for vllm-omni', () => {
    expect(parseDialectOptions(flags({ 'turn-detection': 'semantic_vad' }), {}).turn_detection).toBe('semantic_vad');
    expect(dialectConfig(parseDialectOptions(flags({ 'turn-detection': 'semantic_vad' }), {}), 80)).toMatchObject({ protocol: 'openai', turn_detection: 'semantic_vad' });
    expect(() => parseDialectOptions(flags({ protocol: 'vllm-omni', 'turn-detection': 'semantic_vad' }), {})).toThrow(
      new UsageError('--turn-detection semantic_vad is for --protocol openai (vllm-omni takes server_vad or none)'),
    );
    expect(() => parseDialectOptions(flags({ 'turn-detection': 'semantic_vad', 'commit-every-s': 1 }), {})).toThrow(UsageError);
  });

  it('turns the commit period into whole packets, at least one', () => {
    const o = parseDialectOptions(flags({ 'turn-detection': 'none', 'commit-every-s': 1 }), {});
    expect(dialectConfig(o, 80)).toMatchObject({ protocol: 'openai', turn_detection: 'none', commit_every_packets: 13 });
    expect(dialectConfig({ ...o, commit_every_s: 0.01 }, 80)).toMatchObject({ commit_every_packets: 1 });
  });

  it('redacts the key in both flag spellings, and leaves it out of a child command line', () => {
    const argv = ['--url', 'ws://x', '--api-key', 's3cret', '--api-key=s3cret2', '--quiet'];
    expect(redactArgv(argv)).toEqual(['--url', 'ws://x', '--api-key', '[redacted]', '--api-key=[redacted]', '--quiet']);
    expect(withoutSecrets(argv)).toEqual(['--url', 'ws://x', '--quiet']);
  });
});

describe('dialect options: vllm-omni', () => {
  const vllm = (f: Record<string, unknown> = {}) => parseDialectOptions(flags({ protocol: 'vllm-omni', ...f }), {});

  it('sends turn_detection null and commits only at the end unless a commit period is given, as vLLM-Omni\'s client does', () => {
    expect(dialectConfig(vllm({ model: 'm' }), 80)).toEqual({ protocol: 'vllm-omni', model: 'm', turn_detection: 'none', commit_every_packets: Infinity, output_sample_rate: undefined });
    expect(dialectConfig(vllm({ 'commit-every-s': 0.8 }), 80)).toMatchObject({ commit_every_packets: 10 });
    expect(dialectConfig(vllm({ 'no-playback-ack': true }), 80)).toMatchObject({ no_playback_ack: true });
  });

  it('keeps --model and --no-playback-ack to the vllm-omni dialect', () => {
    expect(() => parseDialectOptions(flags({ model: 'm' }), {})).toThrow(UsageError);
    expect(() => parseDialectOptions(flags({ 'no-playback-ack': true }), {})).toThrow(UsageError);
  });
});
