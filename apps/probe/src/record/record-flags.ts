// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the command.
import { TELEMETRY_FLAGS } from '@duplex-bench/cli';
import { CONVERSATION_FLAGS } from '../run/conversation-flags';
import { DIALECT_FLAGS } from '../run/dialect-flags';
import { ARRIVAL_FLAGS } from '../run/arrival-flags';
import { RUN_FLAGS } from '../run/run-flags';

/** With --conversation: each sample's length when --duration is not given, seconds. */
export const RECORD_CONVERSATION_DURATION_S = 60;

export const RECORD_FLAGS = {
  url: { kind: 'string', group: 'connection', help: 'ws:// or wss:// endpoint of the realtime server (none: the built-in mock, started for this recording, speaking --protocol)', value: 'URL' },
  'mock-profile': { kind: 'enum', values: ['append-echo', 'nemotron', 'minicpmo', 'model'], group: 'connection', help: "without --url: the built-in native mock's profile (default append-echo; nemotron with --conversation)" },
  ...DIALECT_FLAGS,
  // run's --profile, parsed by the same parseDialectOptions: sglang-omni's legacy protocol.
  profile: RUN_FLAGS.profile,
  concurrency: { kind: 'int', min: 1, group: 'load', help: 'sessions at a time (required unless --arrival-rate)', value: 'N' },
  // The arrival flags of run, less --session-duration: a recorded session lasts its sample.
  arrivals: ARRIVAL_FLAGS.arrivals,
  'max-in-flight': ARRIVAL_FLAGS['max-in-flight'],
  seed: ARRIVAL_FLAGS.seed,
  'arrival-rate': { ...ARRIVAL_FLAGS['arrival-rate'], help: 'samples arriving per second on one open-loop schedule fixed up front, instead of --concurrency: each is a session that connects at its intended start and streams its sample; blocked and skipped samples stay to record next time; the summary gains an arrivals block' },
  'run-for': { ...ARRIVAL_FLAGS['run-for'], help: 'with --arrival-rate: arrivals are scheduled for this long, at most one per sample left to record, seconds (default: until every sample has arrived)' },
  'warmup-s': { kind: 'number', min: 0, default: 0, group: 'load', help: 'with --arrival-rate: arrivals intended this long after the start are also counted apart (steady blocking), seconds', value: 'S' },
  'per-subset': { kind: 'int', min: 1, default: 8, group: 'input', help: 'synthetic dataset: samples per subset (4 subsets, 2 variants each); with --conversation: conversations, one session each', value: 'N' },
  output: { kind: 'string', required: true, group: 'output', help: 'recording directory; recording into it again resumes', value: 'DIR' },
  dataset: { kind: 'string', group: 'input', help: 'a directory of WAV files (subdirectories become subsets) instead of the synthetic dataset; any PCM or float WAV, mixed to mono and resampled to --sample-rate on load; the own camera of NAME.wav frames, when it has them, are the directory NAME.frames/ (JPEGs) or a video file NAME.mp4 (.mkv, .webm, .mov, .avi) beside it, read before the first session and sent as --video sends frames', value: 'DIR' },
  ...CONVERSATION_FLAGS,
  duration: { kind: 'number', min: 0, exclusive: true, group: 'input', help: `with --conversation: each sample's length, seconds (default: ${RECORD_CONVERSATION_DURATION_S})`, value: 'S' },
  'min-input-s': { kind: 'number', min: 0, exclusive: true, default: 20, group: 'input', help: 'synthetic dataset: shortest input, seconds', value: 'S' },
  'max-input-s': { kind: 'number', min: 0, exclusive: true, default: 60, group: 'input', help: 'synthetic dataset: longest input, seconds', value: 'S' },
  'output-sample-rate': { kind: 'int', min: 1, group: 'dialect', help: "output audio rate of the figures and output.wav, Hz; overrides the server's grant", value: 'HZ' },
  trace: { kind: 'enum', values: ['full', 'events', 'off'], default: 'full', group: 'output', help: 'full (every event), events (audio payloads as byte lengths) or off (send receipts only)' },
  postprocess: { kind: 'enum', values: ['pool', 'inline', 'off'], default: 'pool', group: 'output', help: 'replay each finished trace in a process pool (pool), in the recording process (inline), or not at all (off)' },
  'connect-timeout-s': { kind: 'number', min: 0, exclusive: true, default: 10, group: 'limits', help: 'bound on connect plus handshake, seconds', value: 'S' },
  'drain-timeout-s': { kind: 'number', min: 0, exclusive: true, group: 'limits', help: "bound on the end of input (the server finishing its answer), seconds (default 30; vllm-omni: the session's input plus 20, at least 20, as their eval runner waits)", value: 'S' },
  'allow-unqualified': { kind: 'bool', group: 'output', help: 'exit 0 even when a packet was late (else 3)' },
  quiet: { kind: 'bool', group: 'output', help: 'no progress lines' },
  ...TELEMETRY_FLAGS,
} as const;
