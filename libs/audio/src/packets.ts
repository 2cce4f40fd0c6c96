/** PCM16 mono: bytes in one millisecond at `sample_rate`. */
export function pcm16BytesPerMs(sample_rate: number): number {
  return (sample_rate * 2) / 1000;
}

/** Input audio cut into packets, each ready as base64 bytes so the send path only splices them into frames. */
export interface PacketSource {
  readonly packet_ms: number;
  readonly sample_rate: number;
  readonly packet_count: number;
  readonly total_bytes: number;
  /** Bytes in packet `seq`: a whole packet, except a shorter last one. */
  packetBytes(seq: number): number;
  /** Packet `seq` as base64 text in ASCII bytes, shared: the caller copies it, never changes it. */
  packetBase64(seq: number): Buffer;
  /**
   * Whether the input ends before packet `seq`, asked at its send start: a source whose length is
   * decided as it plays (a conversation played once) ends there, and packet_count is its bound.
   */
  inputOverAt?(seq: number): boolean;
}

/** `pcm` as base64 text, in bytes. */
function base64Bytes(pcm: Buffer): Buffer {
  return Buffer.from(pcm.toString('base64'), 'latin1');
}

function packetGeometry(sample_rate: number, packet_ms: number): number {
  const packet_bytes = pcm16BytesPerMs(sample_rate) * packet_ms;
  if (!Number.isInteger(packet_bytes) || packet_bytes % 2 !== 0 || packet_bytes <= 0) {
    throw new RangeError(`a ${packet_ms} ms packet at ${sample_rate} Hz is not a whole number of samples`);
  }
  return packet_bytes;
}

/**
 * `duration_s` of silence. Every whole packet shares one base64 string; a last partial packet is
 * sent short (the remaining bytes, not padded), as the native dialect expects.
 */
export function silencePackets(duration_s: number, packet_ms: number, sample_rate = 16000): PacketSource {
  const packet_bytes = packetGeometry(sample_rate, packet_ms);
  const total_bytes = Math.round((duration_s * 1000 * pcm16BytesPerMs(sample_rate)) / 2) * 2;
  const whole = Math.floor(total_bytes / packet_bytes);
  const tail_bytes = total_bytes - whole * packet_bytes;
  const full_b64 = base64Bytes(Buffer.alloc(packet_bytes));
  const tail_b64 = base64Bytes(Buffer.alloc(tail_bytes));
  const packet_count = whole + (tail_bytes > 0 ? 1 : 0);
  return {
    packet_ms,
    sample_rate,
    packet_count,
    total_bytes,
    packetBytes: (seq) => (seq < whole ? packet_bytes : tail_bytes),
    packetBase64: (seq) => (seq < whole ? full_b64 : tail_b64),
  };
}

/** Packets of real PCM, base64-encoded once up front; share one source among sessions streaming the same file. */
export function pcmPackets(pcm: Buffer, packet_ms: number, sample_rate = 16000): PacketSource {
  const packet_bytes = packetGeometry(sample_rate, packet_ms);
  const encoded: Buffer[] = [];
  const sizes: number[] = [];
  for (let offset = 0; offset < pcm.length; offset += packet_bytes) {
    const slice = pcm.subarray(offset, Math.min(pcm.length, offset + packet_bytes));
    encoded.push(base64Bytes(slice));
    sizes.push(slice.length);
  }
  return {
    packet_ms,
    sample_rate,
    packet_count: encoded.length,
    total_bytes: pcm.length,
    packetBytes: (seq) => sizes[seq],
    packetBase64: (seq) => encoded[seq],
  };
}

/**
 * `source`, then `silence_ms` of silence in whole packets (rounded up): the tail a server's VAD
 * needs to close a turn spoken at the very end of the input. A source whose input ends early
 * (`inputOverAt`) ends there, tail and all. 0 ms gives `source` itself.
 */
export function withTrailingSilence(source: PacketSource, silence_ms: number): PacketSource {
  if (silence_ms <= 0) return source;
  const packet_bytes = packetGeometry(source.sample_rate, source.packet_ms);
  const tail_packets = Math.ceil(silence_ms / source.packet_ms);
  const silence = base64Bytes(Buffer.alloc(packet_bytes));
  const head = source.packet_count;
  const over = source.inputOverAt?.bind(source);
  return {
    packet_ms: source.packet_ms,
    sample_rate: source.sample_rate,
    packet_count: head + tail_packets,
    total_bytes: source.total_bytes + tail_packets * packet_bytes,
    packetBytes: (seq) => (seq < head ? source.packetBytes(seq) : packet_bytes),
    packetBase64: (seq) => (seq < head ? source.packetBase64(seq) : silence),
    ...(over ? { inputOverAt: (seq: number) => seq < head && over(seq) } : {}),
  };
}
