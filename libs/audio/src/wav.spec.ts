import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AudioFormatError, encodeWavPcm16, parseWavPcm16, readWavPcm16 } from './wav';

describe('WAV reading', () => {
  it('returns the samples of a 16 kHz mono PCM16 file', () => {
    const pcm = Buffer.from([1, 0, 2, 0, 3, 0]);
    expect(parseWavPcm16(encodeWavPcm16(pcm, 16000), 'a.wav')).toEqual(pcm);
  });

  it('refuses another rate, naming the file and what it found', () => {
    const wav = encodeWavPcm16(Buffer.alloc(8), 44100);
    expect(() => parseWavPcm16(wav, 'voice.wav')).toThrow('voice.wav: expected 16 kHz mono PCM16 WAV, found 44100 Hz, 1 channel(s), 16-bit');
    // The rate asked for is the one named (openai streams 24 kHz by default).
    expect(() => parseWavPcm16(encodeWavPcm16(Buffer.alloc(8), 16000), 'voice.wav', 24000)).toThrow('voice.wav: expected 24 kHz mono PCM16 WAV, found 16000 Hz');
  });

  it('refuses stereo and 8-bit files', () => {
    const stereo = encodeWavPcm16(Buffer.alloc(8), 16000);
    stereo.writeUInt16LE(2, 22);
    expect(() => parseWavPcm16(stereo, 's.wav')).toThrow(/2 channel/);
    const eight = encodeWavPcm16(Buffer.alloc(8), 16000);
    eight.writeUInt16LE(8, 34);
    expect(() => parseWavPcm16(eight, 'e.wav')).toThrow(/8-bit/);
  });

  it('refuses a file that is not WAV', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wav-'));
    const file = join(dir, 'notes.txt');
    await writeFile(file, 'hello, not audio');
    await expect(readWavPcm16(file)).rejects.toBeInstanceOf(AudioFormatError);
    await expect(readWavPcm16(file)).rejects.toThrow(`${file}: expected 16 kHz mono PCM16 WAV, found no RIFF/WAVE header`);
  });
});
