// The flags of a command, in a module that loads nothing else: `--help` reads them without loading the
// command. So a default the help states is written here (command-flags.spec.ts holds it to the lib's).

/** Flags that choose and configure the wire dialect; `run` and `record` share them. */
export const DIALECT_FLAGS = {
  protocol: { kind: 'enum', values: ['native', 'openai', 'vllm-omni'], default: 'native', group: 'dialect', help: "the server's dialect: native (sglang-omni duplex), openai (OpenAI Realtime, GA names) or vllm-omni (vLLM-Omni's duplex flow)" },
  model: { kind: 'string', group: 'dialect', help: 'vllm-omni: the model named in the URL and in session.update', value: 'NAME' },
  'no-playback-ack': { kind: 'bool', group: 'testing', help: 'vllm-omni: never acknowledge playback (an ack-only server then holds its turns)' },
  'api-key': { kind: 'string', group: 'connection', help: 'bearer key sent on the upgrade (default: OPENAI_API_KEY with openai); redacted everywhere', value: 'KEY' },
  'turn-detection': { kind: 'enum', values: ['server_vad', 'semantic_vad', 'none'], group: 'dialect', help: 'openai: server_vad, semantic_vad or none (default: server_vad); vllm-omni: server_vad or none (default: none)' },
  'commit-every-s': { kind: 'number', min: 0, exclusive: true, group: 'dialect', help: 'with --turn-detection none: commit (openai: and ask for a response) after this much input, seconds (default: 1; vllm-omni: once, at the end)', value: 'S' },
  'sample-rate': { kind: 'int', min: 1, group: 'input', help: 'input PCM16 rate, Hz (default: 24000 openai, the only rate OpenAI takes; 16000 native, its only rate, and vllm-omni)', value: 'HZ' },
  pacing: {
    kind: 'enum',
    values: ['realtime', 'lockstep'],
    group: 'load',
    help: "native: realtime (packets on the absolute schedule) or lockstep (each unit of the grant's native_unit_ms sent once the server's sglang.unit.done for the previous one came: the server's pace, reported as units/s; no pacing verdict) (default: realtime)",
  },
  'unit-timeout-s': { kind: 'number', min: 0, exclusive: true, group: 'limits', help: "with --pacing lockstep: bound on each wait for a unit's sglang.unit.done, seconds (default: 10)", value: 'S' },
  'packet-ms': { kind: 'number', min: 0, exclusive: true, group: 'input', help: "packet length, ms (default: 80; openai: the server's chunk_period_ms when it announces one)", value: 'MS' },
  'ref-audio': { kind: 'string', group: 'dialect', help: "vllm-omni: the assistant's reference voice, a WAV file sent whole as session.ref_audio (a data URL; MiniCPM-o 4.5 refuses audio sessions without one)", value: 'FILE' },
  video: {
    kind: 'string',
    group: 'input',
    help: "native and vllm-omni: camera frames, a directory of JPEG files (in name order; past the last, native loops them and vllm-omni holds the last) or a video file (decoded by ffmpeg at --video-fps); sent as the server takes them: native sglang.input_image.append before each unit's first packet when the grant lists image input, vllm-omni video_frames on the append or input_image items as its capabilities say",
    value: 'DIR|FILE',
  },
  'video-fps': { kind: 'number', min: 0, exclusive: true, group: 'input', help: 'frames per second of media time (default: native one per unit, vllm-omni 1; a video file is decoded at this rate, default 1)', value: 'F' },
  'session-extra': { kind: 'string', group: 'dialect', help: 'vllm-omni: a JSON object merged into session.update.session, objects key by key (e.g. \'{"temperature":0.6,"extra_body":{"force_listen_count":2}}\')', value: 'JSON' },
  'admission-retries': { kind: 'int', min: 0, group: 'limits', help: "retries of a session a full server refuses (HTTP 503; vllm-omni: resource_exhausted) (default: native and openai 3, sglang-omni's client; vllm-omni 12, which outlasts the server's 30 s disconnect grace)", value: 'N' },
  'admission-backoff-ms': { kind: 'number', min: 0, group: 'limits', help: 'wait before each admission retry, ms (default 250; native and openai: fixed; vllm-omni: doubling up to 5000)', value: 'MS' },
  'handshake-timeout-s': { kind: 'number', min: 0, exclusive: true, group: 'limits', help: "bound on the dialect's handshake after the upgrade, seconds (default: 30 vllm-omni, as its client; else --connect-timeout-s)", value: 'S' },
  'max-frame-bytes': { kind: 'int', min: 1024, default: 8 * 2 ** 20, group: 'limits', help: "the largest frame taken from the server, bytes (default 8 MiB, sglang-omni's client limit): a larger one ends its session as frame_too_large before it is buffered whole", value: 'N' },
  'max-send-buffer-bytes': { kind: 'int', min: 1024, default: 2 ** 20, group: 'limits', help: 'bytes a session may queue unsent (a server that stopped reading) before it ends as send_backpressure (default 1 MiB, about 24 s of 16 kHz audio)', value: 'N' },
  'close-timeout-s': { kind: 'number', min: 0, exclusive: true, group: 'limits', help: "bound on the dialect's close (session.closed), seconds (default: 20 vllm-omni, as its client; else 5)", value: 'S' },
} as const;
