import { checkJsonObject } from './json-check';

/** What JSON.parse says of the same bytes: an object, or not. */
function parsesToObject(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return false;
  }
}

const FRAMES = [
  '{"type":"sglang.input_audio.accepted","event_id":"mock_0_e7","seq":1,"accepted_end_ms":160,"client_event_id":"s0_a1"}',
  '{"type":"sglang.unit.done","event_id":"mock_0_e10","unit_id":"unit_1","sglang":{"unit_id":"unit_1","chunk_seq":0,"media_time":{"t_start_ms":80,"duration_ms":80}}}',
  '{"type": "response.output_audio_transcript.delta", "response_id": "r", "delta": "caf\\u00e9 \\"quoted\\" \\\\ \\/ \\b\\f\\n\\r\\t", "n": -0.5e-3, "ok": true, "no": false, "z": null}',
  '{"type":"x","list":[1,2.5,-3,[],{},[{"a":[true,null]}]],"empty":""}',
  ' \n{"type":"x"}\r\n\t',
  '{"type":"wide","text":"é中😀"}',
];

// Each valid frame, then every one-byte change of it to one of these characters, and every prefix.
const MUTATIONS = ['"', '\\', '{', '}', '[', ']', ',', ':', '0', '-', '.', 'e', 'x', ' ', '\n', '\u0001'];

describe('checkJsonObject', () => {
  it('accepts what JSON.parse reads as an object', () => {
    for (const f of FRAMES) expect([f, checkJsonObject(Buffer.from(f))]).toEqual([f, 'valid']);
  });

  it('agrees with JSON.parse on every one-character change and every truncation of those frames', () => {
    let cases = 0;
    for (const f of FRAMES) {
      const variants: string[] = [];
      for (let i = 0; i < f.length; i++) for (const m of MUTATIONS) variants.push(f.slice(0, i) + m + f.slice(i + 1));
      for (let i = 0; i < f.length; i++) variants.push(f.slice(0, i));
      for (const v of variants) {
        const check = checkJsonObject(Buffer.from(v));
        if (check === 'unsure') continue;
        cases++;
        expect([v, check === 'valid']).toEqual([v, parsesToObject(v)]);
      }
    }
    expect(cases).toBeGreaterThan(5000);
  });

  it.each([
    ['an array', '[{"type":"x"}]'],
    ['a string', '"x"'],
    ['two objects', '{"type":"x"}{"type":"y"}'],
    ['a trailing comma', '{"type":"x",}'],
    ['a leading zero', '{"n":01}'],
    ['a bare dot', '{"n":1.}'],
    ['a raw control character in a string', '{"s":"a\u0001b"}'],
    ['a short \\u escape', '{"s":"\\u12"}'],
    ['an unknown escape', '{"s":"\\x41"}'],
    ['an unquoted key', '{type:"x"}'],
    ['a truncated literal', '{"b":tru}'],
    ['nothing', ''],
  ])('refuses %s', (_name, text) => {
    expect(checkJsonObject(Buffer.from(text))).toBe('invalid');
  });

  it.each([
    ['an exponent of three digits', '{"n":1e999}'],
    ['a long run of digits', `{"n":${'9'.repeat(400)}}`],
    ['nesting past 64 levels', `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`],
  ])('leaves %s to the parser (unsure)', (_name, text) => {
    expect(checkJsonObject(Buffer.from(text))).toBe('unsure');
  });
});
