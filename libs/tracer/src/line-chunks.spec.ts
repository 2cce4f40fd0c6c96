import { LineChunks } from './line-chunks';
import { withoutAudio } from './without-audio';

function lines(chunks: LineChunks): string[] {
  const text = Buffer.concat(chunks.take()).toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}

describe('LineChunks', () => {
  it('splices an ASCII frame into its line unchanged', () => {
    const c = new LineChunks();
    const frame = '{"type":"input_audio_buffer.append","event_id":"s0_a1","audio":"AAAA"}';
    c.append('send', 12.3456789, frame);
    expect(lines(c)).toEqual([`{"direction":"send","time_s":12.345679,"event":${frame}}`]);
  });

  it('takes received bytes as they arrived', () => {
    const c = new LineChunks();
    c.append('receive', 1, Buffer.from('{"type":"session.created"}'));
    expect(JSON.parse(lines(c)[0])).toEqual({ direction: 'receive', time_s: 1, event: { type: 'session.created' } });
  });

  it('re-encodes a frame with a line break or non-ASCII text into one ASCII line', () => {
    const c = new LineChunks();
    c.append('receive', 1, '{"type":"a",\n"x":1}');
    c.append('receive', 2, '{"type":"response.output_text.delta","delta":"héllo"}');
    c.append('receive', 3, Buffer.from('{"type":"response.output_text.delta","delta":"日本"}'));
    const out = lines(c);
    expect(out).toHaveLength(3);
    for (const line of out) expect(line).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(out[0]).event).toEqual({ type: 'a', x: 1 });
    expect(JSON.parse(out[1]).event.delta).toBe('héllo');
    expect(JSON.parse(out[2]).event.delta).toBe('日本');
  });

  it('keeps a frame that is not JSON as a string, so the line still parses', () => {
    const c = new LineChunks();
    c.append('receive', 1, 'not json\nat all');
    expect(JSON.parse(lines(c)[0]).event).toBe('not json\nat all');
  });

  it('spans chunks, including a line larger than a chunk', () => {
    const c = new LineChunks();
    const big = `{"type":"x","pad":"${'P'.repeat(100_000)}"}`;
    for (let i = 0; i < 30; i++) c.append('send', i, `{"type":"x","pad":"${'Q'.repeat(4000)}"}`);
    c.append('send', 30, big);
    const chunks = c.take();
    expect(chunks.length).toBeGreaterThan(1);
    const out = Buffer.concat(chunks).toString('latin1').trim().split('\n');
    expect(out).toHaveLength(31);
    expect(JSON.parse(out[30]).event.pad).toHaveLength(100_000);
    expect(c.take()).toEqual([]);
  });
});

describe('withoutAudio (--trace events)', () => {
  it('replaces the audio of appends and audio deltas with its byte length, and leaves text alone', () => {
    const audio = Buffer.alloc(2560).toString('base64');
    const append = `{"direction":"send","time_s":1,"event":{"type":"input_audio_buffer.append","event_id":"e","audio":"${audio}"}}`;
    expect(JSON.parse(withoutAudio(append)).event.audio).toBe(2560);
    const delta = `{"direction":"receive","time_s":1,"event":{"type":"response.output_audio.delta","delta":"${Buffer.alloc(3528).toString('base64')}"}}`;
    expect(JSON.parse(withoutAudio(delta)).event.delta).toBe(3528);
    const text = '{"direction":"receive","time_s":1,"event":{"type":"response.output_text.delta","delta":"AAAA"}}';
    expect(withoutAudio(text)).toBe(text);
  });
});
