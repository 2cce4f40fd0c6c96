export { createUsHistogram, recordMs, percentilesMs, encodeHistogram, decodeHistogram, mergeHistograms } from './histogram';
export type { Histogram, PercentilesMs } from './histogram';
export { PacingRecorder, summarizePacing } from './pacing-recorder';
export type { PacketTimes, PacingFigures } from './pacing-recorder';
export { LoopLagMonitor, GcMonitor, CpuMeter, peakRssBytes } from './loop-monitor';
export type { LoopLagFigures, GcFigures, CpuFigures } from './loop-monitor';
export { OverlapCounter, peakOverlap } from './overlap';
export { SampleStore, encodeSamples, decodeSamples } from './samples';
export type { SamplesFile, SessionSampleColumns } from './samples';
