import { parseFlags, TELEMETRY_FLAGS, telemetryOptions, UsageError } from '@duplex-bench/cli';
import type { HttpStubKind, HttpStubOptions, MockBehaviourOptions, MockProfile, ModelOptions } from '@duplex-bench/mock-servers';
import { MOCK_FAULT_ACTIONS, mockFaultsOf, type MockFault } from '@duplex-bench/mock-servers/faults';

/**
 * The behaviour rules, as `--help` states them (the model mock's BehaviourSession holds the same):
 * a mock cannot tell whether a silence ends the user's turn or is a pause inside it, so with
 * --conversation it plays the other side of the script, counting the user's utterances as it hears
 * them.
 */
const BEHAVIOUR_RULES =
  'Behaviour mode (any of these knobs given; else the mock behaves as without them and never decodes its input): the user is heard by energy on the input, answers are answer.wav, silence otherwise, and the stats log what the model did; ' +
  'with --conversation the step after each utterance says what the silence after it is (listen: the end of the turn, answered after --respond-after-ms; ' +
  'silence_ms or another say: a pause, taken only past --takeover-after-ms), an utterance heard during an answer is a barge-in (stops after --stop-after-ms) ' +
  'unless its step says expect: continue (a backchannel: talked over, or yielded to with --yield-on-backchannel); ' +
  'without a script every silence of --respond-after-ms after speech ends the turn and any speech during an answer is a barge-in';

export const SERVE_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai', 'http', 'time'], default: 'native', group: 'dialect', help: "native (sglang-omni duplex), openai (OpenAI Realtime), http (an OpenAI-compatible SSE stub for duplex-bench http) or time (only the reference clock shards measure their offset against, to run on a real server's host)" },
  stub: { kind: 'enum', values: ['max-throughput', 'variable-response'], default: 'variable-response', group: 'model', help: "http: max-throughput (pre-built responses, no waits: the client's roofline) or variable-response (a model's timing)" },
  'output-length': { kind: 'int', min: 1, default: 4000, group: 'model', help: 'http max-throughput: characters per response (one character is one token)', value: 'N' },
  'stream-interval': { kind: 'int', min: 1, default: 1, group: 'model', help: 'http: characters per SSE event', value: 'N' },
  'output-len-mean': { kind: 'number', min: 1, default: 1000, group: 'model', help: "http variable-response: mean output length, characters (lognormal; capped by the request's max_tokens)", value: 'N' },
  'output-len-spread': { kind: 'number', min: 0, default: 0.3, group: 'model', help: 'http variable-response: coefficient of variation of the output length', value: 'COV' },
  'first-chunk-ms': { kind: 'number', min: 0, default: 0, group: 'model', help: 'http variable-response: mean time to the first output, ms (lognormal)', value: 'MS' },
  'first-chunk-spread': { kind: 'number', min: 0, default: 0.2, group: 'model', help: 'http variable-response: coefficient of variation of the time to first output', value: 'COV' },
  'inter-token-ms': { kind: 'number', min: 0, default: 0, group: 'model', help: 'http variable-response: ms per token after the first (excludes --response-rate)', value: 'MS' },
  'response-rate': { kind: 'number', min: 0, default: 0, group: 'model', help: 'http variable-response: responses start at most this many per second over the server (excludes --inter-token-ms)', value: 'R' },
  'max-concurrency': { kind: 'int', min: 0, default: 0, group: 'limits', help: 'http: past this many requests in progress answer 429 (0: no limit)', value: 'N' },
  'no-usage': { kind: 'bool', group: 'model', help: "http: never send usage, as a server that ignores stream_options.include_usage (the client then counts tokens: duplex-bench http --tokenizer)" },
  profile: { kind: 'enum', values: ['append-echo', 'nemotron', 'minicpmo', 'model', 'qwen3-omni-half-duplex'], default: 'append-echo', group: 'model', help: "append-echo (answers every packet), nemotron, minicpmo (native model profiles), model (openai) or qwen3-omni-half-duplex (sglang-omni's legacy turn-based protocol, whatever --protocol says: server VAD by energy, 24 kHz answers in response.audio.delta)" },
  host: { kind: 'string', default: '127.0.0.1', group: 'connection', help: 'address to listen on', value: 'HOST' },
  port: { kind: 'int', min: 0, default: 8765, group: 'connection', help: 'port to listen on (0: any free port)', value: 'PORT' },
  'stamp-sends': { kind: 'bool', group: 'model', help: "every text frame sent carries its send time on the host's monotonic clock as its last field (duplex_bench_sent_ms), which no dialect has: the probe reports its own receive delay from it" },
  'replies-per-append': { kind: 'int', min: 1, default: 3, group: 'model', help: 'append-echo: frames answered per packet', value: 'N' },
  'output-sample-rate': { kind: 'int', min: 1, group: 'model', help: "output audio rate, Hz (default: the profile's; 22050 native, 24000 minicpmo and openai)", value: 'HZ' },
  'burst-units': { kind: 'int', min: 1, group: 'model', help: 'output units sent together once that many are produced (or the turn ends)', value: 'N' },
  'ttfp-ms': { kind: 'number', min: 0, group: 'model', help: "delay from a turn's start to its first audio, ms", value: 'MS' },
  rtf: { kind: 'number', min: 0, exclusive: true, group: 'model', help: 'real-time factor of generation: a unit takes unit-ms x rtf to produce', value: 'X' },
  'turn-every-s': { kind: 'number', min: 0, exclusive: true, group: 'model', help: 'a new model turn starts every this many seconds of input', value: 'S' },
  'tokens-per-step': { kind: 'int', min: 0, default: 0, group: 'model', help: 'tokens each transcript delta reports (sglang.num_tokens; 0: none)', value: 'N' },
  'capacity-sessions': {
    kind: 'int',
    min: 1,
    group: 'model',
    help: 'model profiles: past this many active sessions the model shares a fixed compute (real-time factor and TTFP grow as active/N), so a sweep has a knee to find',
    value: 'N',
  },
  'respond-after-ms': { kind: 'number', min: 0, group: 'model', help: "behaviour mode (any of --respond-after-ms, --answer-ms, --stop-after-ms, --takeover-after-ms, --yield-on-backchannel, --conversation; rules under --conversation): silence after the user's speech ends before the model answers, ms (default 500; with --capacity-sessions x max(1, active/N))", value: 'MS' },
  'answer-ms': { kind: 'number', min: 0, exclusive: true, group: 'model', help: 'behaviour mode: how long an answer speaks (answer.wav cut or looped), ms (default 3000)', value: 'MS' },
  'stop-after-ms': { kind: 'number', min: 0, group: 'model', help: 'behaviour mode: how long the model goes on speaking once the user speaks over it (a barge-in), ms (default 200; with --capacity-sessions x max(1, active/N))', value: 'MS' },
  'takeover-after-ms': { kind: 'number', min: 0, group: 'model', help: 'behaviour mode: the model takes the turn in a pause longer than this, ms (default 0: never)', value: 'MS' },
  'yield-on-backchannel': { kind: 'bool', group: 'model', help: 'behaviour mode: a backchannel during an answer makes the model stop (after --stop-after-ms); else it keeps talking' },
  'leading-silence-ms': { kind: 'number', min: 0, group: 'model', help: 'model mocks without behaviour flags: each response opens with this much silence, then speaks (a -20 dBFS tone) instead of staying silent; a client hears it that much after its first audio (audible_ttfp_ms)', value: 'MS' },
  conversation: { kind: 'string', group: 'model', help: `behaviour mode: the conversation script the probe follows (a built-in name: default, or a YAML or JSON file). ${BEHAVIOUR_RULES}`, value: 'NAME|FILE' },
  'max-sessions': { kind: 'int', min: 1, group: 'limits', help: 'refuse the upgrade (HTTP 503) past this many open sessions (vllm-omni flavour: answer the opening session.update with resource_exhausted)', value: 'N' },
  'metrics-port': { ...TELEMETRY_FLAGS['metrics-port'], help: 'realtime mocks: serve Prometheus metrics (sessions, admissions, frames; with a --gpu-* flag, DCGM GPU gauges) at http://127.0.0.1:P/metrics while serving (0: a free port, printed)' },
  'gpu-base-mib': { kind: 'number', min: 0, default: 0, group: 'telemetry', help: 'with --metrics-port: a test double of a GPU: DCGM_FI_DEV_FB_USED is this many MiB plus --gpu-mib-per-session per active session', value: 'MIB' },
  'gpu-mib-per-session': { kind: 'number', min: 0, default: 0, group: 'telemetry', help: 'with --metrics-port: DCGM_FI_DEV_FB_USED grows this many MiB per active session', value: 'MIB' },
  'gpu-util-per-session': { kind: 'number', min: 0, default: 0, group: 'telemetry', help: 'with --metrics-port: DCGM_FI_DEV_GPU_UTIL is min(100, this x active sessions), %', value: 'PCT' },
  'stats-output': { kind: 'string', group: 'output', help: "write the mock's stats (arrival deviation, loop lag, CPU) as JSON here on exit", value: 'FILE' },
  'outlive-parent': { kind: 'bool', group: 'output', help: 'keep serving when the process that started this one ends (by default that ends it as SIGTERM does: stats written, exit 0)' },
  'unit-ms': { kind: 'number', min: 0, exclusive: true, group: 'model', help: "output unit, ms (default: the profile's; openai 80)", value: 'MS' },
  'event-names': { kind: 'enum', values: ['ga', 'beta'], default: 'ga', group: 'dialect', help: 'openai: ga or beta event names' },
  'vllm-extensions': { kind: 'bool', group: 'dialect', help: "openai: add vLLM-Omni's extensions (chunk_period_ms, server_event_seq, request metrics)" },
  'vad-silence-ms': { kind: 'number', min: 0, exclusive: true, default: 500, group: 'model', help: 'openai: server VAD ends a turn after this much silence, ms', value: 'MS' },
  flavor: { kind: 'enum', values: ['openai', 'vllm-omni'], default: 'openai', group: 'dialect', help: "openai: behave as OpenAI Realtime (openai) or as vLLM-Omni's duplex server (vllm-omni)" },
  'listen-every': { kind: 'int', min: 0, default: 0, group: 'model', help: 'vllm-omni flavour: every Nth turn the model keeps listening (0: never)', value: 'N' },
  'disconnect-grace-s': { kind: 'number', min: 0, default: 30, group: 'limits', help: "vllm-omni flavour: how long a dropped session's slot is held, seconds", value: 'S' },
  'require-ref-audio': { kind: 'bool', group: 'dialect', help: 'vllm-omni flavour: refuse an audio session whose session.update carries no reference voice (ref_audio_required), as MiniCPM-o 4.5 does' },
  'grant-image': { kind: 'bool', group: 'model', help: 'native: the grant lists image input (input_modalities audio and image, input_image_format: JPEG, 512 KiB, --image-max-per-unit frames a unit) and sglang.input_image.append is taken as sglang-omni takes it' },
  'image-max-per-unit': { kind: 'int', min: 1, group: 'model', help: 'native, with --grant-image: camera frames a unit takes (default 1)', value: 'N' },
  'frame-cost-ms': { kind: 'number', min: 0, group: 'model', help: 'native, with --grant-image: compute each camera frame adds to its unit, ms (grown with the load past --capacity-sessions), so a sweep shows the knee move with video (default 0)', value: 'MS' },
  'send-lag-ms': { kind: 'number', min: 0, group: 'model', help: "vllm-omni flavour: every frame (and the close) leaves this many ms after the session made it, in order, as from a server whose outbound queue lags: a commit then crosses a response.created on the wire, and the client's first ack of that response is refused as playback_ack_too_late (default 0)", value: 'MS' },
  'image-items': { kind: 'bool', group: 'model', help: "vllm-omni flavour: the capabilities state image input without video (supports_image_input), so frames come as input_image items, at most 8 live and 4 MiB (input_backpressure past it)" },
  'created-at-first-audio': { kind: 'bool', group: 'model', help: "vllm-omni flavour: what the mock always does now, as the server does (each response.created goes with the response's first audio, --ttfp-ms after the turn); kept so scripts that give it still run" },
  'turn-based': { kind: 'bool', group: 'model', help: 'vllm-omni flavour: a turn-based model (Qwen3-Omni) that answers only committed turns (by server VAD, or the client without it); clients that leave auto_response on, commit under server VAD or close with a turn open are counted in the stats' },
  'tls-cert': { kind: 'string', group: 'connection', help: 'serve wss:// with this PEM certificate (with --tls-key)', value: 'FILE' },
  'tls-key': { kind: 'string', group: 'connection', help: 'the PEM key of --tls-cert', value: 'FILE' },
  fault: { kind: 'string', group: 'limits', help: `for fault tests: every session misbehaves so from its --fault-after-th append on (what each does: libs/mock-servers/src/mock-fault.ts; what the probe makes of each: docs/reliability.md); one of ${MOCK_FAULT_ACTIONS.join(', ')}, as far as the dialect has it`, value: 'ACTION' },
  'fault-after': { kind: 'int', min: 0, default: 10, group: 'limits', help: 'with --fault: appends a session takes before it misbehaves (0: at once; native: right after session.updated)', value: 'N' },
} as const;

const HTTP_FLAG_NAMES = ['stub', 'output-length', 'stream-interval', 'output-len-mean', 'output-len-spread', 'first-chunk-ms', 'first-chunk-spread', 'inter-token-ms', 'response-rate', 'max-concurrency', 'no-usage'];
const BEHAVIOUR_FLAG_NAMES = ['respond-after-ms', 'answer-ms', 'stop-after-ms', 'takeover-after-ms', 'yield-on-backchannel', 'conversation'];
const WS_FLAG_NAMES = [...BEHAVIOUR_FLAG_NAMES, 'stamp-sends', 'leading-silence-ms', 'grant-image', 'image-max-per-unit', 'frame-cost-ms', 'profile', 'replies-per-append', 'output-sample-rate', 'burst-units', 'ttfp-ms', 'rtf', 'turn-every-s', 'tokens-per-step', 'capacity-sessions', 'max-sessions', 'unit-ms', 'tls-cert', 'tls-key', 'fault', 'fault-after'];

export interface ServeOptions {
  protocol: 'native' | 'openai' | 'http' | 'time';
  /** --protocol http: the stub's settings. */
  http?: Omit<HttpStubOptions, 'host' | 'port' | 'clock'>;
  profile: MockProfile;
  /** Unset: the profile's unit (native) or 80 ms (openai). */
  unit_ms?: number;
  openai: { names: 'ga' | 'beta'; vllm: boolean; silence_ms: number; flavor: 'openai' | 'vllm-omni'; listen_every: number; disconnect_grace_ms: number; require_ref_audio?: boolean; turn_based?: boolean; image_items?: boolean; send_lag_ms?: number };
  tls?: { cert: string; key: string };
  /** Only what was given: each profile has its own timings. */
  model: Partial<ModelOptions>;
  host: string;
  port: number;
  replies_per_append: number;
  /** Unset: the profile's rate (native: 22,050 Hz nemotron and append-echo, 24,000 Hz minicpmo; openai 24,000 Hz). */
  output_sample_rate?: number;
  max_sessions?: number;
  capacity_sessions?: number;
  stamp_sends?: boolean;
  /** Behaviour mode: only when a behaviour flag was given, with only what was given. */
  behaviour?: MockBehaviourOptions;
  /** Each response's leading silence before it speaks, ms (model mocks without behaviour flags). */
  leading_silence_ms?: number;
  /** native: image input granted, and what each frame costs. */
  images?: { max_per_unit?: number; frame_cost_ms?: number };
  stats_output?: string;
  /** `--metrics-port`: live /metrics on 127.0.0.1 while serving. */
  metrics_port?: number;
  /** `--gpu-*`: the DCGM gauges of a GPU the mock does not have, on its /metrics; absent without a --gpu-* flag. */
  gpu?: { base_mib: number; mib_per_session: number; util_per_session: number };
  /** Keep serving when the parent process ends (else that is taken as SIGTERM). */
  outlive_parent: boolean;
  /** `--fault`: every session misbehaves so. */
  fault?: MockFault;
}

export function parseServeOptions(argv: string[]): ServeOptions {
  const f = parseFlags(argv, SERVE_FLAGS);
  if (f._.length > 0) throw new UsageError(`unexpected argument "${f._[0]}"`);
  if (f.port > 65535) throw new UsageError(`--port must be at most 65535, got ${f.port}`);
  const openaiOnly = (['event-names', 'vllm-extensions', 'vad-silence-ms', 'flavor', 'listen-every', 'disconnect-grace-s', 'turn-based', 'created-at-first-audio', 'image-items', 'send-lag-ms'] as const).filter((k) => argv.some((a) => a === `--${k}` || a.startsWith(`--${k}=`)));
  if (f.protocol !== 'openai' && openaiOnly.length > 0) throw new UsageError(`--${openaiOnly[0]} is for --protocol openai`);
  for (const k of ['turn-based', 'created-at-first-audio', 'image-items', 'send-lag-ms'] as const) if (f[k] !== undefined && f[k] !== false && f.flavor !== 'vllm-omni') throw new UsageError(`--${k} is for --flavor vllm-omni`);
  if ((f.protocol === 'http' || f.protocol === 'time') && f['metrics-port'] !== undefined) throw new UsageError('--metrics-port is for the realtime mocks (--protocol native or openai)');
  const given = (k: string) => argv.some((a) => a === `--${k}` || a.startsWith(`--${k}=`));
  const httpOnly = HTTP_FLAG_NAMES.filter(given);
  if (f.protocol !== 'http' && httpOnly.length > 0) throw new UsageError(`--${httpOnly[0]} is for --protocol http`);
  if (f.protocol === 'time') {
    const other = [...WS_FLAG_NAMES].filter(given);
    if (other.length > 0) throw new UsageError(`--${other[0]} is not for --protocol time`);
  }
  if (f.protocol === 'http') {
    const wsOnly = WS_FLAG_NAMES.filter(given);
    if (wsOnly.length > 0) throw new UsageError(`--${wsOnly[0]} is not for --protocol http`);
    if (f['inter-token-ms'] > 0 && f['response-rate'] > 0) throw new UsageError('--inter-token-ms and --response-rate exclude each other');
    return {
      protocol: 'http',
      http: {
        kind: f.stub as HttpStubKind,
        stream_interval: f['stream-interval'],
        output_length: f['output-length'],
        output_len_mean: f['output-len-mean'],
        output_len_spread: f['output-len-spread'],
        first_chunk_ms: f['first-chunk-ms'],
        first_chunk_spread: f['first-chunk-spread'],
        inter_token_ms: f['inter-token-ms'],
        response_rate: f['response-rate'],
        max_concurrency: f['max-concurrency'],
        usage: !f['no-usage'],
      },
      profile: 'append-echo',
      openai: { names: 'ga', vllm: false, silence_ms: 500, flavor: 'openai', listen_every: 0, disconnect_grace_ms: 30_000 },
      model: {},
      host: f.host,
      port: f.port,
      replies_per_append: f['replies-per-append'],
      stats_output: f['stats-output'],
      outlive_parent: f['outlive-parent'],
    };
  }
  if ((f['tls-cert'] === undefined) !== (f['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  const unit = f['unit-ms'];
  if (unit !== undefined && (!Number.isInteger(16 * unit) || !Number.isInteger(24 * unit))) throw new UsageError(`--unit-ms ${unit} is not a whole number of samples at 16 and 24 kHz`);
  const profile = f.profile as MockProfile;
  if (f['capacity-sessions'] !== undefined && profile === 'append-echo') throw new UsageError('--capacity-sessions is for a model profile (nemotron, minicpmo, model)');
  if (f.protocol === 'native' && profile === 'model') throw new UsageError('--profile model is for --protocol openai; the native profiles are append-echo, nemotron and minicpmo');
  const behaviourGiven = BEHAVIOUR_FLAG_NAMES.filter(given);
  const vllmFlavor = f.protocol === 'openai' && f.flavor === 'vllm-omni';
  if (f['grant-image'] && f.protocol !== 'native') throw new UsageError('--grant-image is for --protocol native (vllm-omni takes frames on its appends, or --image-items)');
  for (const k of ['image-max-per-unit', 'frame-cost-ms'] as const) if (f[k] !== undefined && !f['grant-image']) throw new UsageError(`--${k} needs --grant-image`);
  if (f['leading-silence-ms'] !== undefined && ((profile === 'append-echo' && !vllmFlavor) || behaviourGiven.length > 0)) {
    throw new UsageError('--leading-silence-ms is for a model mock without behaviour flags (--profile nemotron or minicpmo, --protocol openai --profile model, or --flavor vllm-omni)');
  }
  if (behaviourGiven.length > 0 && profile === 'append-echo' && !vllmFlavor) throw new UsageError(`--${behaviourGiven[0]} is for a model mock (--profile nemotron or minicpmo, --protocol openai --profile model, or --flavor vllm-omni)`);
  if (given('fault-after') && f.fault === undefined) throw new UsageError('--fault-after needs --fault');
  if (f.fault !== undefined) {
    if (!(MOCK_FAULT_ACTIONS as readonly string[]).includes(f.fault)) throw new UsageError(`--fault must be one of ${MOCK_FAULT_ACTIONS.join(', ')}, got "${f.fault}"`);
    const dialect = profile === 'qwen3-omni-half-duplex' ? 'legacy' : vllmFlavor ? 'vllm-omni' : f.protocol === 'openai' ? 'openai' : 'native';
    if (!mockFaultsOf(dialect, f['vllm-extensions']).includes(f.fault as MockFault['action'])) throw new UsageError(`--fault ${f.fault} is not defined for the ${dialect} mock (it takes ${mockFaultsOf(dialect, f['vllm-extensions']).join(', ')})`);
  }
  if (f.protocol === 'native' && f['replies-per-append'] < 2) throw new UsageError('--replies-per-append must be at least 2 for the native dialect (an audio delta and sglang.unit.done per unit)');
  const set = <T>(v: T | undefined, key: string) => (v === undefined ? {} : { [key]: v });
  return {
    protocol: f.protocol as ServeOptions['protocol'],
    unit_ms: unit,
    openai: {
      names: f['event-names'] as 'ga' | 'beta',
      vllm: f['vllm-extensions'],
      silence_ms: f['vad-silence-ms'],
      flavor: f.flavor as 'openai' | 'vllm-omni',
      listen_every: f['listen-every'],
      disconnect_grace_ms: f['disconnect-grace-s'] * 1000,
      ...(f['require-ref-audio'] ? { require_ref_audio: true } : {}),
      ...(f['turn-based'] ? { turn_based: true } : {}),
      ...(f['image-items'] ? { image_items: true } : {}),
      ...(f['send-lag-ms'] ? { send_lag_ms: f['send-lag-ms'] } : {}),
    },
    tls: f['tls-cert'] !== undefined && f['tls-key'] !== undefined ? { cert: f['tls-cert'], key: f['tls-key'] } : undefined,
    profile,
    model: {
      ...set(f['ttfp-ms'], 'ttfp_ms'),
      ...set(f.rtf, 'rtf'),
      ...set(f['burst-units'], 'burst_units'),
      ...set(f['turn-every-s'], 'turn_every_s'),
      ...set(f['tokens-per-step'] || undefined, 'tokens_per_step'),
    },
    host: f.host,
    port: f.port,
    replies_per_append: f['replies-per-append'],
    output_sample_rate: f['output-sample-rate'],
    max_sessions: f['max-sessions'],
    capacity_sessions: f['capacity-sessions'],
    ...(f['stamp-sends'] ? { stamp_sends: true } : {}),
    ...(behaviourGiven.length > 0
      ? {
          behaviour: {
            ...set(f['respond-after-ms'], 'respond_after_ms'),
            ...set(f['answer-ms'], 'answer_ms'),
            ...set(f['stop-after-ms'], 'stop_after_ms'),
            ...set(f['takeover-after-ms'], 'takeover_after_ms'),
            ...(f['yield-on-backchannel'] ? { yield_on_backchannel: true } : {}),
            ...set(f.conversation, 'conversation'),
          },
        }
      : {}),
    ...set(f['leading-silence-ms'], 'leading_silence_ms'),
    ...(f['grant-image'] ? { images: { ...set(f['image-max-per-unit'], 'max_per_unit'), ...set(f['frame-cost-ms'], 'frame_cost_ms') } } : {}),
    stats_output: f['stats-output'],
    metrics_port: telemetryOptions({ 'metrics-port': f['metrics-port'], 'metrics-linger-s': 0, 'otlp-interval-s': 5, 'dashboard-linger-s': 0 }).metrics_port,
    outlive_parent: f['outlive-parent'],
    ...(f.fault === undefined ? {} : { fault: { action: f.fault as MockFault['action'], after_appends: f['fault-after'] } }),
    ...gpuOf(f, argv),
  };
}

/** `--gpu-base-mib`, `--gpu-mib-per-session`, `--gpu-util-per-session`: any of them exports the DCGM gauges; only with --metrics-port. */
function gpuOf(f: { 'gpu-base-mib': number; 'gpu-mib-per-session': number; 'gpu-util-per-session': number; 'metrics-port'?: number }, argv: string[]): Pick<ServeOptions, 'gpu'> {
  const given = ['gpu-base-mib', 'gpu-mib-per-session', 'gpu-util-per-session'].filter((k) => argv.some((a) => a === `--${k}` || a.startsWith(`--${k}=`)));
  if (given.length === 0) return {};
  if (f['metrics-port'] === undefined) throw new UsageError(`--${given[0]} goes with --metrics-port (the GPU gauges are served on /metrics)`);
  return { gpu: { base_mib: f['gpu-base-mib'], mib_per_session: f['gpu-mib-per-session'], util_per_session: f['gpu-util-per-session'] } };
}
