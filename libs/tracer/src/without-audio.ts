// For `--trace events`: run on the writer thread over whole trace lines (see line-chunks.ts).

const AUDIO_FIELD = /"(audio|delta)":"([A-Za-z0-9+/=]*)"/;
const AUDIO_EVENTS = /"type":\s*"(input_audio_buffer\.append|response\.output_audio\.delta|response\.audio\.delta)"/;

/** For `--trace events`: the audio payload of an append or audio delta becomes its byte length. */
export function withoutAudio(line: string): string {
  if (!AUDIO_EVENTS.test(line)) return line;
  return line.replace(AUDIO_FIELD, (_m, field: string, b64: string) => {
    const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    return `"${field}":${Math.floor((b64.length * 3) / 4) - padding}`;
  });
}
