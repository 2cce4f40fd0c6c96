/**
 * Mono PCM16 from `from_hz` to `to_hz` by linear interpolation: enough for the mock's answer and
 * for tests that feed the committed speech at an input rate. To be replaced by the audio lib's WAV
 * loader (`parseWavAs(bytes, file, target_rate)`, which resamples any PCM WAV) when it lands; one
 * caller per use, so the swap is one line each.
 */
export function resamplePcm16(pcm: Buffer, from_hz: number, to_hz: number): Buffer {
  const n_in = Math.floor(pcm.length / 2);
  if (from_hz === to_hz) return Buffer.from(pcm.subarray(0, n_in * 2));
  const n_out = Math.floor((n_in * to_hz) / from_hz);
  const out = Buffer.alloc(n_out * 2);
  for (let i = 0; i < n_out; i++) {
    const x = (i * from_hz) / to_hz;
    const k = Math.floor(x);
    const a = pcm.readInt16LE(k * 2);
    const b = k + 1 < n_in ? pcm.readInt16LE((k + 1) * 2) : a;
    out.writeInt16LE(Math.round(a + (b - a) * (x - k)), i * 2);
  }
  return out;
}
