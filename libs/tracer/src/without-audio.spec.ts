import { withoutAudio } from './without-audio';

/** A trace line as the writer thread reads it: the event spliced into `{direction, time_s, event}`. */
const line = (event: string) => `{"direction":"send","time_s":12.345678,"event":${event}}`;

describe('withoutAudio', () => {
  it('writes the audio of an append as its byte length, whatever the base64 padding', () => {
    for (let bytes = 0; bytes <= 9; bytes++) {
      const audio = Buffer.alloc(bytes, 0x7f).toString('base64');
      const slim = withoutAudio(line(`{"type":"input_audio_buffer.append","event_id":"s1_a7","audio":"${audio}","sglang":{"seq":7}}`));
      expect(JSON.parse(slim)).toEqual({ direction: 'send', time_s: 12.345678, event: { type: 'input_audio_buffer.append', event_id: 's1_a7', audio: bytes, sglang: { seq: 7 } } });
    }
  });

  it('counts the bytes of base64 sent without its padding', () => {
    for (let bytes = 1; bytes <= 5; bytes++) {
      const unpadded = Buffer.alloc(bytes, 0x41).toString('base64').replace(/=+$/, '');
      expect(Buffer.from(unpadded, 'base64')).toHaveLength(bytes);
      expect(JSON.parse(withoutAudio(line(`{"type":"input_audio_buffer.append","audio":"${unpadded}"}`))).event.audio).toBe(bytes);
    }
  });

  it.each(['response.output_audio.delta', 'response.audio.delta'])('writes the delta of %s as its byte length', (type) => {
    const delta = Buffer.alloc(3528, 1).toString('base64');
    expect(JSON.parse(withoutAudio(line(`{"type": "${type}","response_id":"r1","delta":"${delta}"}`))).event).toEqual({ type, response_id: 'r1', delta: 3528 });
  });

  it('leaves every other event as it is, a text delta and a transcript among them', () => {
    for (const event of [
      '{"type":"response.output_audio_transcript.delta","delta":"Hello"}',
      '{"type":"response.text.delta","delta":"abcd"}',
      '{"type":"conversation.item.create","item":{"audio":"AAAA"}}',
      '{"type":"input_audio_buffer.commit"}',
      '{"type":"session.update","session":{"input_audio_format":"pcm16"}}',
    ]) {
      expect(withoutAudio(line(event))).toBe(line(event));
    }
  });

  it('changes nothing but the payload', () => {
    const audio = Buffer.alloc(2560).toString('base64');
    const event = `{"type":"input_audio_buffer.append","audio":"${audio}","event_id":"x"}`;
    expect(withoutAudio(line(event))).toBe(line('{"type":"input_audio_buffer.append","audio":2560,"event_id":"x"}'));
  });
});
