import { ModelPlayout, type VoiceSession } from '@duplex-bench/audio';
import { decodeFrame } from '@duplex-bench/protocol';
import { hearModel } from './hear-model';

const delta = (pcm: Buffer, received_s: number) => ({ frame: decodeFrame(JSON.stringify({ type: 'response.output_audio.delta', response_id: 'r', delta: pcm.toString('base64') })), raw: Buffer.alloc(0), received_s });

describe('hearModel', () => {
  it('plays model audio into the playout, and hands it to the voice thread: digital silence by its length only', () => {
    const voiced: Array<[number, number]> = [];
    const silent: Array<[number, number]> = [];
    const voice = { add: (t: number, _b64: string, rate: number) => voiced.push([t, rate]), silence: (t: number, bytes: number) => silent.push([t, bytes]) } as unknown as VoiceSession;
    const playout = new ModelPlayout();
    const stage = hearModel(playout, voice, () => 24000);
    const loud = Buffer.alloc(4800);
    for (let i = 0; i < loud.length; i += 2) loud.writeInt16LE(i % 4 === 0 ? 12000 : -12000, i);
    stage(delta(Buffer.alloc(4800), 1));
    stage(delta(loud, 1.1));
    expect(silent).toEqual([[1, 4800]]);
    expect(voiced).toEqual([[1.1, 24000]]);
  });
});
