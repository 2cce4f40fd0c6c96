import { FrameReader } from './frame-reader';

/** A server frame (unmasked): FIN and opcode, then the length in 7, 16 or 64 bits. */
function frame(opcode: number, payload: Buffer, o: { fin?: boolean; rsv?: number; mask?: boolean } = {}): Buffer {
  const n = payload.length;
  const b0 = ((o.fin ?? true) ? 0x80 : 0) | ((o.rsv ?? 0) << 4) | opcode;
  const mask = o.mask ? 0x80 : 0;
  let header: Buffer;
  if (n < 126) header = Buffer.from([b0, mask | n]);
  else if (n < 65_536) {
    header = Buffer.from([b0, mask | 126, 0, 0]);
    header.writeUInt16BE(n, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = b0;
    header[1] = mask | 127;
    header.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    header.writeUInt32BE(n >>> 0, 6);
  }
  return Buffer.concat([header, o.mask ? Buffer.alloc(4) : Buffer.alloc(0), payload]);
}
const text = (s: string) => frame(0x1, Buffer.from(s));

function reader(max_payload = 1 << 20) {
  const got: string[] = [];
  const pings: string[] = [];
  const handed: Buffer[] = [];
  const r = new FrameReader({ message: (p, bin) => got.push(bin ? `bin:${p.length}` : p.toString()), ping: (p) => pings.push(p.toString()), handOff: (rest) => handed.push(Buffer.from(rest)) }, max_payload);
  return { r, got, pings, handed };
}

describe('FrameReader', () => {
  it('reads every whole frame of one read in order, at each length encoding, text and binary', () => {
    const { r, got, handed } = reader();
    const big = 'x'.repeat(70_000);
    r.push(Buffer.concat([text('{"a":1}'), text('y'.repeat(300)), text(big), frame(0x2, Buffer.alloc(5))]));
    expect(got).toEqual(['{"a":1}', 'y'.repeat(300), big, 'bin:5']);
    expect(handed).toEqual([]);
  });

  it('keeps a frame cut across reads, in its header or its payload, until it is whole', () => {
    const { r, got } = reader();
    const bytes = Buffer.concat([text('first'), text('z'.repeat(1000)), text('last')]);
    // Every cut point: the frames come out whole and once each.
    for (let cut = 1; cut < bytes.length; cut += 97) {
      got.length = 0;
      r.push(bytes.subarray(0, cut));
      r.push(bytes.subarray(cut));
      expect(got).toEqual(['first', 'z'.repeat(1000), 'last']);
    }
    got.length = 0;
    for (const b of bytes) r.push(Buffer.from([b]));
    expect(got).toEqual(['first', 'z'.repeat(1000), 'last']);
  });

  it('hands pings on to be answered and passes pongs over', () => {
    const { r, got, pings, handed } = reader();
    r.push(Buffer.concat([frame(0x9, Buffer.from('hb')), frame(0xa, Buffer.from('x')), text('after')]));
    expect({ got, pings, handed }).toEqual({ got: ['after'], pings: ['hb'], handed: [] });
  });

  it.each([
    ['a close frame', frame(0x8, Buffer.from([0x03, 0xe8]))],
    ['a fragment (FIN clear)', frame(0x1, Buffer.from('part'), { fin: false })],
    ['a continuation', frame(0x0, Buffer.from('part'))],
    ['a reserved bit', frame(0x1, Buffer.from('{}'), { rsv: 4 })],
    ['a masked frame', frame(0x1, Buffer.from('{}'), { mask: true })],
    ['a text frame that is not UTF-8', frame(0x1, Buffer.from([0x7b, 0xff, 0x7d]))],
    ['a control frame over 125 bytes', frame(0x9, Buffer.alloc(126))],
    ['an unknown opcode', frame(0x3, Buffer.from('?'))],
  ])('hands %s and everything after it to ws, and reads nothing more', (_what, odd) => {
    const { r, got, handed } = reader();
    const after = text('later');
    r.push(Buffer.concat([text('before'), odd, after]));
    r.push(text('next read'));
    expect(got).toEqual(['before']);
    expect(handed).toEqual([Buffer.concat([odd, after])]);
    expect(r.gaveUp).toBe(true);
  });

  it('hands a frame over the payload bound to ws at its header, before any of its payload came', () => {
    const { r, got, handed } = reader(1000);
    const header = frame(0x1, Buffer.alloc(2000, 0x61)).subarray(0, 4);
    r.push(Buffer.concat([text('ok'), header]));
    expect({ got, handed: handed.map((h) => h.length) }).toEqual({ got: ['ok'], handed: [4] });
  });
});
