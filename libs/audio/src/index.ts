export { parseWavPcm16, readWavPcm16, parseWavAs, readWavAs, encodeWavPcm16, ACCEPTED_WAV } from './wav';
export type { PcmFormat, WavConversion } from './wav';
export { resamplePcm16 } from './resample';
export type { ResampleQuality } from './resample';
export { speechSpans, SpeechDetector, voiceActivitySettings, fvadHangoverMs, VOICE_ACTIVITY_DEFAULTS } from './voice-activity';
export type { VoiceActivitySettings, SpeechSpan } from './voice-activity';
export { pcm16Rms, pcm16Dbfs, pcm16Samples, base64Dbfs, isZeroBase64, firstVoicedMs, VOICED_DBFS } from './level';
export { pcm16BytesPerMs, silencePackets, pcmPackets, withTrailingSilence } from './packets';
export type { PacketSource } from './packets';

export { readConversation, parseConversation, speechDir, BUILT_IN_CONVERSATIONS, DEFAULT_LISTEN_MAX_S } from './conversation-script';
export type { ConversationScript, ConversationStep, StepExpect } from './conversation-script';
export { ConversationPlayer, utteranceOf, UTTERANCE_SAMPLE_THRESHOLD, MODEL_DONE_SILENCE_MS } from './conversation-player';
export type { Utterance, StepRecord, ResponseEnd, ResponseStart, PlayerOptions } from './conversation-player';
export { ModelPlayout } from './playout';
export type { PlayedSpan } from './playout';
export { VoiceThread } from './voice-thread';
export type { VoiceSession } from './voice-thread';

/* Error types */
export { AudioFormatError } from './wav';
export { ConversationError } from './conversation-script';
export { VoiceActivityError } from './fvad';
export { syntheticDataset, syntheticPcm, syntheticPackets, wavDataset, SYNTHETIC_SUBSETS, SYNTHETIC_VARIANTS } from './dataset';
export type { Sample, SyntheticOptions } from './dataset';
export { readVideoFrames, splitJpegs, VideoError, VIDEO_LIMITS } from './video-frames';
export type { VideoFrames } from './video-frames';
