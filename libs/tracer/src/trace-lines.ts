/**
 * Trace lines share the shape of the sglang-omni client's traces: {direction, time_s, event}, with
 * time_s on the monotonic clock. The event is spliced in as the frame string, never re-encoded,
 * unless it holds a line break or non-ASCII (JSON.stringify's escaping then keeps it one line).
 */
export type Direction = 'send' | 'receive' | 'error' | 'admission';

const NEEDS_REENCODE = /[\n\r\u0080-\uffff]/;

export function traceLine(direction: Direction, time_s: number, frame: string): string {
  let event = frame;
  if (NEEDS_REENCODE.test(frame)) {
    try {
      event = JSON.stringify(JSON.parse(frame)).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    } catch {
      event = JSON.stringify(frame); // not JSON: kept as a string so the line still parses
    }
  }
  return `{"direction":"${direction}","time_s":${time_s.toFixed(6)},"event":${event}}\n`;
}

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
