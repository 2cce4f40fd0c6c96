export { parseWavPcm16, readWavPcm16, encodeWavPcm16 } from './wav';
export type { PcmFormat } from './wav';
export { pcm16BytesPerMs, silencePackets, pcmPackets } from './packets';
export type { PacketSource } from './packets';

/* Error types */
export { AudioFormatError } from './wav';
export { syntheticDataset, syntheticPcm, syntheticPackets, wavDataset, SYNTHETIC_SUBSETS, SYNTHETIC_VARIANTS } from './dataset';
export type { Sample, SyntheticOptions } from './dataset';
