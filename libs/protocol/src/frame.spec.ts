import { randomBytes } from 'node:crypto';
import { ProtocolError } from './errors';
import { audioDeltaBase64, audioDeltaInfo, base64ByteLength, decodeFrame as decodeText, decodeFrameBytes, frameSent, mentions, spliceFrame, textDeltaInfo, unsignedField, type DecodedFrame } from './frame';

/** Every decoding test runs twice: on the frame's text, and on its bytes as they came off the socket. */
const DECODERS: [string, (text: string) => DecodedFrame][] = [
  ['text', (text) => decodeText(text)],
  ['bytes', (text) => decodeFrameBytes(Buffer.from(text))],
];

/** A frame of exactly `chars` characters whose `type` leads, padded inside a string field. */
function frameOfLength(type: string, chars: number): string {
  const head = `{"type":"${type}","delta":"`;
  const tail = '"}';
  return head + 'A'.repeat(chars - head.length - tail.length) + tail;
}

describe.each(DECODERS)('decoding from %s', (from, decodeFrame) => {
  function decodeError(text: string): ProtocolError {
    try {
      decodeFrame(text);
    } catch (err) {
      expect(err).toBeInstanceOf(ProtocolError);
      return err as ProtocolError;
    }
    throw new Error(`decodeFrame accepted ${JSON.stringify(text)}`);
  }

  describe('decodeFrame', () => {
    let parse: jest.SpyInstance;
    beforeEach(() => {
      parse = jest.spyOn(JSON, 'parse');
    });
    afterEach(() => {
      parse.mockRestore();
    });

    // From text a small frame is parsed at once; from bytes it is checked at once and parsed when read.
    const PARSED_AT_DECODE = from === 'text' ? 1 : 0;

    it('parses a small frame once, and keeps its text as it arrived', () => {
      const text = '{"type":"session.created","session":{"id":"s1"}}';
      const frame = decodeFrame(text);
      expect(parse).toHaveBeenCalledTimes(PARSED_AT_DECODE);
      expect(frame.type).toBe('session.created');
      expect(frame.text).toBe(text);
      expect(frame.event()).toEqual({ type: 'session.created', session: { id: 's1' } });
      expect(frame.event()).toBe(frame.event());
      expect(parse).toHaveBeenCalledTimes(1);
    });

    it('reads the type of a small frame wherever it stands in the object', () => {
      expect(decodeFrame('{"seq":3,"type":"sglang.input_audio.accepted"}').type).toBe('sglang.input_audio.accepted');
    });

    it('reads the type of a frame of 512 chars or more without parsing it, and parses once on demand', () => {
      const text = frameOfLength('response.output_audio.delta', 512);
      expect(text).toHaveLength(512);
      const frame = decodeFrame(text);
      expect(frame.type).toBe('response.output_audio.delta');
      expect(parse).not.toHaveBeenCalled();
      const event = frame.event();
      expect(event.type).toBe('response.output_audio.delta');
      expect((event.delta as string).length).toBeGreaterThan(400);
      expect(frame.event()).toBe(event);
      expect(parse).toHaveBeenCalledTimes(1);
    });

    it('checks a frame of 511 chars whole at once (and parses it at once from text)', () => {
      const text = frameOfLength('response.output_audio.delta', 511);
      expect(text).toHaveLength(511);
      expect(decodeFrame(text).type).toBe('response.output_audio.delta');
      expect(parse).toHaveBeenCalledTimes(PARSED_AT_DECODE);
      expect(() => decodeFrame(text.slice(0, 300) + '"' + text.slice(301))).toThrow(ProtocolError);
    });

    it('tolerates white space around the leading type of a large frame', () => {
      const text = '{ "type" : "response.output_audio.delta" ,"delta":"' + 'A'.repeat(600) + '"}';
      expect(decodeFrame(text).type).toBe('response.output_audio.delta');
      expect(parse).not.toHaveBeenCalled();
    });

    it('parses a large frame whose type does not lead', () => {
      const text = '{"delta":"' + 'A'.repeat(600) + '","type":"response.output_audio.delta"}';
      expect(decodeFrame(text).type).toBe('response.output_audio.delta');
      expect(parse).toHaveBeenCalledTimes(1);
    });

    it('parses a large frame whose leading type has an escape, and unescapes it', () => {
      const text = '{"type":"odd\\"type","delta":"' + 'A'.repeat(600) + '"}';
      expect(decodeFrame(text).type).toBe('odd"type');
      expect(parse).toHaveBeenCalledTimes(1);
    });

    it('parses a large frame that does not end in "}" (trailing white space)', () => {
      const text = frameOfLength('response.output_audio.delta', 600) + '\n';
      expect(decodeFrame(text).type).toBe('response.output_audio.delta');
      expect(parse).toHaveBeenCalledTimes(1);
    });

    it('reports a truncated large frame as MALFORMED_FRAME at once', () => {
      const text = frameOfLength('response.output_audio.delta', 600).slice(0, -2);
      const error = decodeError(text);
      expect(error.code).toBe('MALFORMED_FRAME');
      expect(error.info.excerpt).toBe(text.slice(0, 200));
      expect(error.message).toContain(text.slice(0, 200));
    });

    it('reports a number no double holds (1e999 parses to Infinity) as MALFORMED_FRAME', () => {
      const error = decodeError('{"type":"sglang.input_audio.accepted","event_id":"e","seq":0,"accepted_end_ms":1e999}');
      expect(error.code).toBe('MALFORMED_FRAME');
      expect(error.message).toContain('not finite');
      expect(decodeFrame('{"type":"x","n":1e300,"s":"1e999"}').event().n).toBe(1e300);
    });

    it('reports a peeked large frame that is not JSON when its event is asked for', () => {
      const text = '{"type":"response.output_audio.delta","delta":"' + 'A'.repeat(600) + '}';
      const frame = decodeFrame(text);
      expect(frame.type).toBe('response.output_audio.delta');
      expect(() => frame.event()).toThrow(ProtocolError);
    });

    it.each([
      ['not JSON at all', 'hello'],
      ['a truncated object', '{"type":"response.output_audio.delta","delta":'],
      ['an empty text', ''],
      ['an array', '[{"type":"session.created"}]'],
      ['null', 'null'],
      ['a string', '"session.created"'],
      ['a number', '42'],
    ])('rejects %s as MALFORMED_FRAME with an excerpt', (_name, text) => {
      const error = decodeError(text);
      expect(error.name).toBe('ProtocolError');
      expect(error.code).toBe('MALFORMED_FRAME');
      expect(error.info.excerpt).toBe(text);
    });

    it.each([
      ['no type', '{"event_id":"e1"}'],
      ['a numeric type', '{"type":5}'],
      ['a null type', '{"type":null}'],
      ['an empty type', '{"type":""}'],
      ['an object type', '{"type":{"name":"session.created"}}'],
    ])('rejects a frame with %s as MALFORMED_FRAME', (_name, text) => {
      const error = decodeError(text);
      expect(error.code).toBe('MALFORMED_FRAME');
      expect(error.message).toMatch(/no string "type"/);
    });
  });

  describe('audioDeltaInfo', () => {
    it('reads the response id, item and payload bytes of an audio delta without parsing it', () => {
      const b64 = Buffer.alloc(3528).toString('base64');
      const frame = decodeFrame(`{"type":"response.output_audio.delta","response_id":"resp_3","item_id":"i","delta":"${b64}","sglang":{"unit_id":1}}`);
      expect(audioDeltaInfo(frame)).toEqual({ response_id: 'resp_3', item_id: 'i', bytes: 3528 });
      const indexed = decodeFrame(`{"type":"response.output_audio.delta","response_id":"r","item_id":"i","output_index":0,"content_index":2,"delta":"${b64}"}`);
      expect(audioDeltaInfo(indexed)).toMatchObject({ item_id: 'i', content_index: 2 });
      // A server that writes the item after the payload: read from the tail.
      const after = decodeFrame(`{"type":"response.output_audio.delta","response_id":"r","delta":"${b64}","item_id":"late","content_index":1}`);
      expect(audioDeltaInfo(after)).toMatchObject({ item_id: 'late', content_index: 1 });
    });
    it('reads the rate a delta states, before or after its payload', () => {
      const b64 = Buffer.alloc(3200).toString('base64');
      const after = decodeFrame(`{"type":"response.output_audio.delta","response_id":"r","delta":"${b64}","sample_rate_hz":16000,"server_event_seq":4}`);
      expect(audioDeltaInfo(after)).toEqual({ response_id: 'r', bytes: 3200, sample_rate_hz: 16000 });
      const before = decodeFrame(`{"type":"response.output_audio.delta","response_id":"r","sample_rate_hz":24000,"delta":"${b64}"}`);
      expect(audioDeltaInfo(before).sample_rate_hz).toBe(24000);
    });

    it('reads vLLM-Omni\'s rate, cumulative duration and stage-0 TPOT behind a metadata object over 1 KiB, never parsing the payload', () => {
      const b64 = Buffer.alloc(44100).toString('base64');
      const metadata = {
        session_id: 's',
        epoch: 0,
        playback: { generated_ms: 1000, sent_ms: 1000, played_ms: 0, committed_ms: 0 },
        vllm_omni: { runtime_impl: 'x'.repeat(1200), stage_metrics: { '0': { num_tokens_out: 12, vllm_ttft_ms: 80, vllm_tpot_ms: 21.5 }, '1': { vllm_tpot_ms: 99 } } },
        audio_duration_ms: 2000,
      };
      const text = `{"type":"response.output_audio.delta","event_id":"e","response_id":"r","item_id":"item_r","output_index":0,"content_index":0,"delta":"${b64}","format":"pcm16","sample_rate_hz":22050,"metadata":${JSON.stringify(metadata)},"server_event_seq":9}`;
      expect(text.length - text.lastIndexOf('"sample_rate_hz"')).toBeGreaterThan(1024);
      const frame = decodeFrame(text);
      const parse = jest.spyOn(JSON, 'parse');
      try {
        expect(audioDeltaInfo(frame)).toEqual({ response_id: 'r', item_id: 'item_r', content_index: 0, bytes: 44100, sample_rate_hz: 22050, audio_duration_ms: 2000, stage_tpot_ms: 21.5, stage_tokens_out: 12 });
        // Only the tail after the payload was parsed.
        for (const [arg] of parse.mock.calls) expect(String(arg)).not.toContain(b64.slice(0, 100));
      } finally {
        parse.mockRestore();
      }
    });

    it('reads the same from the bytes as from the text, for every layout the byte reader takes and every one it gives to the text path', () => {
      const b64 = Buffer.alloc(3000).toString('base64');
      const layouts = [
        `"response_id":"resp_1","item_id":"i","delta":"${b64}","sglang":{"unit_id":"unit_1","chunk_seq":1}`,
        `"response_id" : "r","content_index": 2 ,"delta":"${b64}"`,
        `"response_id":"r","delta":"${b64}","item_id":"late","content_index":1`,
        `"response_id":"r","sample_rate_hz":24000,"delta":"${b64}","sample_rate_hz":16000`,
        `"response_id":"r","sample_rate_hz":22050.0,"delta":"${b64}"`,
        `"response_id":"r\\u00e9","delta":"${b64}"`,
        `"response_id":"réponse","item_id":"é","delta":"${b64}"`,
        `"item_id":"i","delta":"${b64}","response_id":"r"`,
        `"response_id":"r","item_id":7,"delta":"${b64}"`,
        `"response_id":"r","delta":"${b64}","metadata":{"audio_duration_ms":80}`,
        `"response_id":"r","delta":"${b64}","sample_rate_hz":16000,"sample_rate_hz":24000`,
        `"response_id":"r","delta":"${b64}""item_id":"t"`,
        `"response_id":"r","item_id":"delta","note":"response_id","delta":"${b64}","x":{"content_index":3}`,
      ];
      for (const layout of layouts) {
        const text = `{"type":"response.output_audio.delta",${layout}}`;
        const bytes = decodeFrameBytes(Buffer.from(text));
        expect({ layout: layout.replace(b64, '…'), info: audioDeltaInfo(bytes) }).toEqual({ layout: layout.replace(b64, '…'), info: audioDeltaInfo(decodeText(text)) });
      }
    });

    it('reads the same from the bytes as from the text over every combination of where the keys stand, how they are spaced and how the ids are written', () => {
      const b64 = Buffer.alloc(300).toString('base64');
      const spacings = [
        (k: string, v: string) => `"${k}":${v}`,
        (k: string, v: string) => `"${k}": ${v}`,
        (k: string, v: string) => `"${k}"\n\t:\r\n ${v}`,
      ];
      const ids = ['resp_1', 'r\\u0041', 'réponse'];
      const places = ['head', 'tail', 'none'] as const;
      let cases = 0;
      for (const field of spacings)
        for (const id of ids)
          for (const response of ['head', 'tail'] as const)
            for (const item of places)
              for (const index of places)
                for (const rate of ['none', 'head', 'tail', 'both'] as const)
                  for (const metadata of [false, true]) {
                    const head = [field('type', '"response.output_audio.delta"')];
                    const tail: string[] = [];
                    (response === 'head' ? head : tail).push(field('response_id', `"${id}"`));
                    if (item !== 'none') (item === 'head' ? head : tail).push(field('item_id', `"item_${id}"`));
                    if (index !== 'none') (index === 'head' ? head : tail).push(field('content_index', '2'));
                    if (rate === 'head' || rate === 'both') head.push(field('sample_rate_hz', '24000'));
                    if (rate === 'tail' || rate === 'both') tail.push(field('sample_rate_hz', '16000'), field('sample_rate_hz', '8000'));
                    if (metadata) tail.push(field('metadata', '{"audio_duration_ms":80,"note":"response_id"}'));
                    tail.push(field('event_id', '"e1"'));
                    const text = `{${[...head, field('delta', `"${b64}"`), ...tail].join(',')}}`;
                    const layout = text.replace(b64, '…');
                    const bytes = Buffer.from(text);
                    const frame = decodeFrameBytes(bytes);
                    expect({ layout, info: audioDeltaInfo(frame) }).toEqual({ layout, info: audioDeltaInfo(decodeText(text)) });
                    for (const key of ['"sample_rate_hz"', '"metadata"', '"item_id"', '"absent"', '"}'])
                      expect({ layout, key, found: mentions(frame, key) }).toEqual({ layout, key, found: bytes.indexOf(key) >= 0 });
                    cases++;
                  }
      expect(cases).toBe(3 * 3 * 2 * 3 * 3 * 4 * 2);
    });

    it('falls back to parsing when the layout differs', () => {
      const frame = decodeFrame(JSON.stringify({ type: 'response.audio.delta', delta: Buffer.alloc(30).toString('base64'), response_id: 'r' }, null, 1));
      expect(audioDeltaInfo(frame)).toEqual({ response_id: 'r', bytes: 30 });
    });
  });
});

describe('base64ByteLength', () => {
  it.each(Array.from({ length: 11 }, (_, n) => n))('counts %i bytes as Buffer does, padded and unpadded', (n) => {
    const padded = randomBytes(n).toString('base64');
    expect(base64ByteLength(padded)).toBe(Buffer.from(padded, 'base64').length);
    expect(base64ByteLength(padded)).toBe(n);
    const unpadded = padded.replace(/=+$/, '');
    expect(base64ByteLength(unpadded)).toBe(n);
  });

  it('counts a 2,560-byte packet without decoding it', () => {
    expect(base64ByteLength(Buffer.alloc(2560).toString('base64'))).toBe(2560);
  });
});

describe('frames read from their bytes', () => {
  const b64 = Buffer.alloc(3528).toString('base64');
  const delta = (payload: string, extra = '') => Buffer.from(`{"type": "response.output_audio.delta", "response_id": "resp_1", "delta": "${payload}"${extra}}`);

  it('never turns a large delta into a string: type, figures and key searches read the bytes', () => {
    const toString = jest.spyOn(Buffer.prototype, 'toString');
    try {
      const frame = decodeFrameBytes(delta(b64, ', "server_event_seq": 7'));
      expect(frame.type).toBe('response.output_audio.delta');
      expect(audioDeltaInfo(frame)).toEqual({ response_id: 'resp_1', bytes: 3528 });
      expect(mentions(frame, '"server_event_seq":')).toBe(true);
      expect(mentions(frame, '"metadata"')).toBe(false);
      expect(frame.undecoded).toBe(true);
      // Only the short head before the payload and the tail after it became strings.
      for (const call of toString.mock.results) expect(String(call.value).length).toBeLessThan(100);
    } finally {
      toString.mockRestore();
    }
  });

  it('finds a key in a delta whose payload was found as a search of the whole frame does, and hands its payload as a view of the bytes', () => {
    const extras = ['', ', "server_event_seq": 7', ', "metadata": {"vllm_omni": {"response_request_metrics": {"ttfp_ms": 3}}}', ', "delta": "x"'];
    // Keys that start at the payload's opening quote, at its closing quote ('"}' only there when nothing follows), and a one-byte key.
    const keys = ['"server_event_seq":', '"response_request_metrics"', '"metadata"', '"response_id"', '"type"', '"delta":', `"${b64.slice(0, 8)}`, '"}', '"', '"absent"', 'no quote first'];
    for (const extra of extras) {
      const bytes = delta(b64, extra);
      const frame = decodeFrameBytes(bytes);
      expect(audioDeltaInfo(frame).bytes).toBe(3528);
      const payload = audioDeltaBase64(frame);
      expect(payload.toString('latin1')).toBe(b64);
      expect(payload.buffer).toBe(bytes.buffer);
      for (const key of keys) expect({ extra, key, found: mentions(frame, key) }).toEqual({ extra, key, found: bytes.indexOf(key) >= 0 });
      // Asked before the figures (no payload found yet), and of a payload with an escape (none kept): the same answers.
      const early = decodeFrameBytes(bytes);
      for (const key of keys) expect(mentions(early, key)).toBe(bytes.indexOf(key) >= 0);
      expect(audioDeltaBase64(early).toString('latin1')).toBe(b64);
      const escaped = delta(`${b64.slice(0, 40)}\\/${b64.slice(40)}`, extra);
      const kept = decodeFrameBytes(escaped);
      audioDeltaInfo(kept);
      for (const key of keys) expect(mentions(kept, key)).toBe(escaped.indexOf(key) >= 0);
    }
  });

  it('reads each type as itself, types whose bytes hash alike (Aa, BB) and more types than are kept included', () => {
    const types = ['Aa', 'BB', 'x.Aa', 'x.BB', 'AaAa', 'BBBB', 'AaBB', ...Array.from({ length: 600 }, (_, i) => `t.${i}`)];
    for (const round of [1, 2]) for (const type of types) expect({ round, type: decodeFrameBytes(Buffer.from(`{"type":"${type}","n":1}`)).type }).toEqual({ round, type });
  });

  it('answers, from the scan that read a delta, whether it holds the keys every delta is asked for, as a search of the whole frame does', () => {
    const metrics = '"response_request_metrics":{"ttfp_ms":3}';
    const tokens = '"num_tokens":2';
    // Each key: before the payload or text, after it, nested, named only inside a string (escaped), or absent.
    const places = (field: string) => ({
      head: { head: `${field},`, tail: '' },
      tail: { head: '', tail: `,${field}` },
      nested: { head: '', tail: `,"metadata_x":{"o":{${field}}}` },
      string: { head: `"note":"${field.replace(/"/g, '\\"')}",`, tail: '' },
      none: { head: '', tail: '' },
    });
    const keys = ['"response_request_metrics"', '"num_tokens"', '"absent"', '"response_id"'];
    let cases = 0;
    for (const [m, mp] of Object.entries(places(metrics)))
      for (const [t, tp] of Object.entries(places(tokens))) {
        const audio = Buffer.from(`{"type":"response.output_audio.delta",${mp.head}${tp.head}"response_id":"r1","delta":"${b64}"${mp.tail}${tp.tail}}`);
        const text = Buffer.from(`{"type":"response.output_audio_transcript.delta",${mp.head}${tp.head}"response_id":"r1","delta":"a word"${mp.tail}${tp.tail}}`);
        const a = decodeFrameBytes(audio);
        expect(audioDeltaInfo(a).response_id).toBe('r1');
        expect(a.undecoded).toBe(true);
        const x = decodeFrameBytes(text);
        expect(textDeltaInfo(x).response_id).toBe('r1');
        // A text delta with a token count is parsed for it (and then searched as text).
        expect(x.undecoded).toBe(text.indexOf('"num_tokens"') < 0);
        for (const [frame, bytes] of [[a, audio], [x, text]] as const) {
          expect(frame.keysScanned).not.toBe(0);
          for (const key of keys) expect({ m, t, key, found: mentions(frame, key) }).toEqual({ m, t, key, found: bytes.indexOf(key) >= 0 });
        }
        cases++;
      }
    expect(cases).toBe(25);
  });

  it('takes no byte above 0x7f after a quote for a key\'s first letter (0xE4 & 0x7f is "d")', () => {
    const bytes = Buffer.concat([Buffer.from('{"type":"response.output_audio.delta","response_id":"r","'), Buffer.from([0xe4]), Buffer.from(`elta":"zz","delta":"${b64}"}`)]);
    const frame = decodeFrameBytes(bytes);
    expect(audioDeltaInfo(frame)).toEqual({ response_id: 'r', bytes: 3528 });
    expect(audioDeltaBase64(frame).toString('latin1')).toBe(b64);
  });

  it('reads a delta written with spaces after its colons (Python json.dumps defaults) as one written without', () => {
    expect(audioDeltaInfo(decodeFrameBytes(delta(b64)))).toEqual({ response_id: 'resp_1', bytes: 3528 });
    expect(audioDeltaInfo(decodeText(delta(b64).toString()))).toEqual({ response_id: 'resp_1', bytes: 3528 });
  });

  it.each([
    ['bytes', (t: string) => decodeFrameBytes(Buffer.from(t))],
    ['text', (t: string) => decodeText(t)],
  ])('parses a payload with an escape in it (%s) rather than counting the escape as base64', (_from, decode) => {
    const escaped = b64.slice(0, 100) + '\\/' + b64.slice(102);
    const frame = decode(delta(escaped).toString());
    expect(audioDeltaInfo(frame).bytes).toBe(Buffer.from(JSON.parse(`"${escaped}"`) as string, 'base64').length);
  });

  it.each(DECODERS)('reads an unsigned field from %s: its last occurrence, spaces skipped; none when no digit follows', (_from, decode) => {
    expect(unsignedField(decode('{"type":"x","seq": 12,"n":{"seq":  345}}'), '"seq":')).toBe(345);
    expect(unsignedField(decode('{"type":"x","seq":"7"}'), '"seq":')).toBeUndefined();
    expect(unsignedField(decode('{"type":"x","seq":-3}'), '"seq":')).toBeUndefined();
    expect(unsignedField(decode('{"type":"x"}'), '"seq":')).toBeUndefined();
  });

  it('reads an unsigned field from bytes as from text, over frames full of near misses of its key', () => {
    const pieces = ['"seq":1', '"seq": 23', '"sseq":9', '"seq":"4"', '"se":"q"', '"q":"seq"', '"s":"\\"seq\\":7"', '"n":{"seq":45}', '"seqs":6', '"x":"seq:8"'];
    let seed = 11;
    const pick = (): string => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return pieces[seed % pieces.length];
    };
    let found = 0;
    for (let n = 0; n < 3000; n++) {
      const members = ['"type":"x"'];
      for (let k = n % 9; k > 0; k--) members.push(pick());
      const text = `{${members.join(',')}}`;
      const fromText = unsignedField(decodeText(text), '"seq":');
      expect([text, unsignedField(decodeFrameBytes(Buffer.from(text)), '"seq":')]).toEqual([text, fromText]);
      if (fromText !== undefined) found++;
    }
    expect(found).toBeGreaterThan(300);
    // Its digits the frame's last before the brace.
    expect(unsignedField(decodeFrameBytes(Buffer.from('{"type":"x","a":{"seq":6},"seq":78}')), '"seq":')).toBe(78);
  });

  it.each([', "sample_rate_hz": 2.4e4', ', "sample_rate_hz": "24000"'])('reads the figures of a delta whose rate is not plain digits (%s) from its bytes as from its text', (extra) => {
    const odd = delta(b64, extra);
    expect(audioDeltaInfo(decodeFrameBytes(odd))).toEqual(audioDeltaInfo(decodeText(odd.toString())));
    expect(audioDeltaInfo(decodeFrameBytes(delta(b64, ', "sample_rate_hz": 24000'))).sample_rate_hz).toBe(24000);
  });

  it('reads each frame\'s own type from its bytes, the same type again and again, two whose hashes collide (Aa, BB), and past 300 types', () => {
    const types = ['Aa', 'BB', 'ab', 'ba', 'response.output_audio.delta', ...Array.from({ length: 300 }, (_, i) => `t.${i}`)];
    for (let round = 0; round < 2; round++) {
      for (const type of types) expect(decodeFrameBytes(Buffer.from(`{"type":"${type}","x":1}`)).type).toBe(type);
    }
  });

  it('decodes the text of a frame read from bytes when asked, once', () => {
    const bytes = delta(b64);
    const frame = decodeFrameBytes(bytes);
    expect(frame.text).toBe(bytes.toString());
    expect(frame.text).toBe(frame.text);
    expect(frame.undecoded).toBe(false);
    expect((frame.event().delta as string).length).toBe(b64.length);
  });

  describe('textDeltaInfo', () => {
    const transcript = (fields: Record<string, unknown>) => JSON.stringify({ type: 'response.output_audio_transcript.delta', event_id: 'e5', ...fields });

    it('reads a plain delta from the bytes of a small frame without parsing or decoding it', () => {
      const parse = jest.spyOn(JSON, 'parse');
      try {
        const frame = decodeFrameBytes(Buffer.from(transcript({ response_id: 'resp_0', item_id: 'i', delta: ' hello' })));
        expect(textDeltaInfo(frame)).toEqual({ response_id: 'resp_0', chars: 6 });
        expect(parse).not.toHaveBeenCalled();
        expect(frame.undecoded).toBe(true);
      } finally {
        parse.mockRestore();
      }
    });

    it.each([
      ['escapes in the delta', { response_id: 'r', delta: 'say "hi"\n' }, { response_id: 'r', chars: 9 }],
      ['non-ASCII text (counted in UTF-16 units, as JavaScript does)', { response_id: 'r', delta: 'café 😀' }, { response_id: 'r', chars: 7 }],
      ['the response id after the delta', { delta: 'ab', response_id: 'late' }, { response_id: 'late', chars: 2 }],
      ['a token count', { response_id: 'r', delta: 'ab', sglang: { num_tokens: 3 } }, { response_id: 'r', chars: 2, tokens: 3 }],
      ['no response id', { delta: 'ab' }, { response_id: '', chars: 2 }],
      ['an escape in the response id', { response_id: 'r"1', delta: 'ab' }, { response_id: 'r"1', chars: 2 }],
      ['a non-ASCII response id after the delta', { delta: 'ab', response_id: 'réponse' }, { response_id: 'réponse', chars: 2 }],
    ])('gives what parsing gives for %s', (_name, fields, expected) => {
      const text = transcript(fields);
      expect(textDeltaInfo(decodeFrameBytes(Buffer.from(text)))).toEqual(expected);
      expect(textDeltaInfo(decodeText(text))).toEqual(expected);
    });

    it('reads each of many ids as itself, ids read before kept by their bytes only', () => {
      const b64 = Buffer.alloc(960).toString('base64');
      // More ids than the strings kept, some of the same length and letters, each read twice, in two orders.
      const ids = Array.from({ length: 2000 }, (_, i) => (i % 3 === 0 ? `resp_${i}` : i % 3 === 1 ? `resp_${String(i).split('').reverse().join('')}x` : `r${i}`));
      for (const order of [ids, [...ids].reverse()]) {
        for (const id of order) {
          const audio = decodeFrameBytes(Buffer.from(`{"type":"response.output_audio.delta","response_id":"${id}","item_id":"item_${id}","delta":"${b64}"}`));
          expect(audioDeltaInfo(audio)).toEqual({ response_id: id, item_id: `item_${id}`, bytes: 960 });
          expect(textDeltaInfo(decodeFrameBytes(Buffer.from(transcript({ response_id: id, delta: 'ab' }))))).toEqual({ response_id: id, chars: 2 });
        }
      }
    });
  });
});

describe('spliceFrame and frameSent', () => {
  const payload = (c: string) => Buffer.from(c.repeat(40));

  it('splices head, payload and tail into bytes of exactly their length', () => {
    const frame = spliceFrame('{"a":"', payload('Q'), '"}');
    expect(frame.toString('latin1')).toBe(`{"a":"${'Q'.repeat(40)}"}`);
    expect(frame.length).toBe(48);
    frameSent(frame);
  });

  it('writes the next frame over one handed back, and never over one kept', () => {
    const kept = spliceFrame('{"k":"', payload('K'), '"}');
    const next = spliceFrame('{"n":"', payload('N'), '"}');
    expect(next.buffer).not.toBe(kept.buffer);
    expect(kept.toString('latin1')).toBe(`{"k":"${'K'.repeat(40)}"}`);

    frameSent(next);
    const reused = spliceFrame('{"r":"', payload('R'), '"}');
    expect(reused.buffer).toBe(next.buffer);
    expect(reused.toString('latin1')).toBe(`{"r":"${'R'.repeat(40)}"}`);
    expect(kept.toString('latin1')).toBe(`{"k":"${'K'.repeat(40)}"}`);
  });

  it('ignores a frame handed back after a later splice, and one too short for the next frame', () => {
    const older = spliceFrame('{"o":"', payload('O'), '"}');
    const newer = spliceFrame('{"w":"', payload('W'), '"}');
    frameSent(older);
    const after = spliceFrame('{"x":"', payload('X'), '"}');
    expect(after.buffer).not.toBe(older.buffer);
    expect(after.buffer).not.toBe(newer.buffer);
    expect(older.toString('latin1')).toBe(`{"o":"${'O'.repeat(40)}"}`);

    frameSent(after);
    const longer = spliceFrame('{"l":"', Buffer.from('L'.repeat(40 + 200)), '"}');
    expect(longer.buffer).not.toBe(after.buffer);
    expect(longer.toString('latin1')).toBe(`{"l":"${'L'.repeat(240)}"}`);
  });
});
