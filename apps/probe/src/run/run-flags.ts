// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the command.
import { SERVER_METRICS_FLAGS, TELEMETRY_FLAGS } from '@duplex-bench/cli';
import { ARRIVAL_FLAGS } from './arrival-flags';
import { CONVERSATION_FLAGS } from './conversation-flags';
import { DIALECT_FLAGS } from './dialect-flags';

export const RUN_FLAGS = {
  url: { kind: 'string', required: true, group: 'connection', help: 'ws:// or wss:// endpoint of the realtime server', value: 'URL' },
  ...DIALECT_FLAGS,
  profile: {
    kind: 'enum',
    values: ['qwen3-omni-half-duplex'],
    group: 'dialect',
    help: "a model sglang-omni serves over its legacy turn-based protocol (LegacyRealtimeFacade), which it sets: qwen3-omni-half-duplex (16 kHz input in 80 ms packets, 24 kHz output; --turn-detection server_vad or semantic_vad, default server_vad; a no-op session.update probes the session 1 s after the input, then the socket closes); no --protocol",
  },
  concurrency: { kind: 'int', min: 1, group: 'load', help: 'sessions in this process, started together (with --shard: in all shards together); required unless --arrival-rate', value: 'N' },
  ...ARRIVAL_FLAGS,
  shard: { kind: 'string', group: 'load', help: 'run shard I of N: its share of --concurrency, global session ids, output under OUTPUT/shard-I', value: 'I/N' },
  'start-at': { kind: 'number', min: 0, group: 'load', help: 'start streaming at this instant (epoch ms) of the reference clock, each shard on its own monotonic clock after it; a shard ready later fails', value: 'EPOCH_MS' },
  'time-url': { kind: 'string', group: 'connection', help: "reference clock to measure this host's offset against before the start (default with --shard or --start-at: the server's /duplex-bench/time; off: none)", value: 'URL|off' },
  'clock-offset-ms': { kind: 'number', min: -1e7, default: 0, group: 'testing', help: "add this to every wall-clock reading of this process: a host whose clock is off, to show the offset is measured and corrected", value: 'MS' },
  'max-session-s': {
    kind: 'number',
    min: 0,
    exclusive: true,
    group: 'limits',
    help: "the longest session the server allows, seconds: a longer --duration is refused before the run (default: native and the legacy profile 230, sglang-omni's client cap under its 240 s session deadline; others none)",
    value: 'S',
  },
  duration: { kind: 'number', min: 0, exclusive: true, group: 'load', help: "audio per session, seconds; with --conversation the script starts again until it ends; required unless --conversation (each session then plays the script once, to its own end, at most every listen's max_s: the summary's duration_s is the longest input a session streamed) or --arrival-rate with --session-duration and --run-for", value: 'S' },
  output: { kind: 'string', required: true, group: 'output', help: 'run directory (created)', value: 'DIR' },
  processes: { kind: 'int', min: 1, default: 1, group: 'load', help: 'child processes, each with --concurrency sessions', value: 'N' },
  'output-sample-rate': { kind: 'int', min: 1, group: 'dialect', help: "output audio rate of the figures, Hz; overrides the server's grant (default: the grant, else 22050 native, 24000 openai and vllm-omni)", value: 'HZ' },
  audio: { kind: 'string', group: 'input', help: 'a WAV to stream instead of silence, cut to --duration (any PCM or float WAV: mixed to mono and resampled to --sample-rate on load, recorded in run.json)', value: 'FILE' },
  ...CONVERSATION_FLAGS,
  'inject-stall-ms': { kind: 'number', min: 0, default: 0, group: 'testing', help: "block the client's own loop once, mid-run, for this long, ms: proves the pacing check can fail", value: 'MS' },
  'inject-stall-kind': { kind: 'enum', values: ['busy', 'gc', 'disk'], default: 'busy', group: 'testing', help: 'with --inject-stall-ms: how the loop is held: busy (a spin), gc (forced full collections of a large heap), disk (writes flushed with fsync), so --sampler can be shown to tell them apart' },
  sampler: { kind: 'bool', group: 'telemetry', help: "run the external /proc sampler, a process of its own, on this probe's loop thread: each loop stall over 50 ms gets a cause (gc, disk_wait, cpu_wait, busy) with its evidence in the summary's stalls block" },
  'sampler-interval-ms': { kind: 'number', min: 1, default: 5, group: 'telemetry', help: 'with --sampler: ms between its looks', value: 'MS' },
  'sampler-dir': { kind: 'string', group: 'testing', help: "with --sampler under --processes (the launcher sets it): the run directory whose sampler.jsonl the launcher's one sampler writes; this process reads its looks there instead of starting its own", value: 'DIR' },
  trace: { kind: 'enum', values: ['full', 'events', 'off'], default: 'off', group: 'output', help: 'full (every event), events (audio payloads as byte lengths) or off (send receipts only)' },
  'keep-traces': { kind: 'bool', group: 'output', help: 'keep trace.jsonl files (deleted after summarising otherwise)' },
  'start-spread-ms': { kind: 'number', min: 0, group: 'load', help: 'spread of session starts after the start gate, ms (default: one packet, or 2 ms per session when longer)', value: 'MS' },
  'warmup-s': { kind: 'number', min: 0, default: 0, group: 'output', help: 'also report steady-state percentiles of the packets sent this long after the start gate, seconds', value: 'S' },
  'connect-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 10, group: 'limits', help: 'bound on connect plus handshake, seconds', value: 'S' },
  'drain-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 30, group: 'limits', help: 'bound on the end of input (the server finishing its answer), seconds', value: 'S' },
  'open-parallel': { kind: 'int', min: 1, default: 64, group: 'limits', help: 'handshakes in flight at once before the start gate', value: 'N' },
  'start-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 60, group: 'limits', help: 'with --processes: bound on every child being connected and ready, seconds', value: 'S' },
  'cpu-affinity': { kind: 'enum', values: ['auto', 'off'], default: 'auto', group: 'load', help: 'with --processes: auto (Linux: pin each child to a physical core) or off' },
  'allow-unqualified': { kind: 'bool', group: 'output', help: 'exit 0 even when a packet was late (else 3)' },
  quiet: { kind: 'bool', group: 'output', help: 'no progress lines' },
  ...TELEMETRY_FLAGS,
  ...SERVER_METRICS_FLAGS,
} as const;
