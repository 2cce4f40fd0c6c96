import { chunkPeriodMs } from '@duplex-bench/protocol';
import { readSessionCreated } from '@duplex-bench/transport';
import { authHeaders, checkPacket, type DialectOptions } from './dialect-options';
import { reasonOf } from '@duplex-bench/session';
import { RunInputError } from './input-error';

export interface PacketSize {
  packet_ms: number;
  /** Where the size came from, for run.json. */
  source: '--packet-ms' | 'default' | 'session.created.capabilities.chunk_period_ms';
}

/**
 * The packet size of a run. With the openai dialect and no `--packet-ms`, one connection reads
 * the server's `session.created` first: a server that announces `chunk_period_ms` (vLLM-Omni)
 * gets packets of that size. The connection is closed before the run opens its sessions.
 */
export async function resolvePacketSize(url: string, o: DialectOptions, connect_timeout_ms: number): Promise<PacketSize> {
  if (o.packet_ms_given) return { packet_ms: o.packet_ms, source: '--packet-ms' };
  if (o.protocol !== 'openai') return { packet_ms: o.packet_ms, source: 'default' };
  const created = await readSessionCreated(url, { connect_timeout_ms, headers: authHeaders(o) });
  const chunk = chunkPeriodMs(created);
  if (chunk === undefined) return { packet_ms: o.packet_ms, source: 'default' };
  try {
    checkPacket(chunk, o.sample_rate);
  } catch {
    throw new RunInputError('BAD_CHUNK_PERIOD', `the server's chunk_period_ms ${chunk} is not a whole number of samples at ${o.sample_rate} Hz; give --packet-ms`);
  }
  return { packet_ms: chunk, source: 'session.created.capabilities.chunk_period_ms' };
}

/**
 * `resolvePacketSize` for a command: a server that cannot be reached is passed to `unreachable`
 * as one message, and the result is null (the command exits 1); bad input still throws its RunInputError.
 * A server that refuses the look at admission (full: HTTP 503) is reachable: the run goes on with
 * the default packet, `said` says so, and each session meets the refusal as its own `admission_refused`.
 */
export async function packetSizeOr(
  url: string,
  o: DialectOptions,
  connect_timeout_ms: number,
  unreachable: (message: string) => void,
  said: (line: string) => void = () => undefined,
): Promise<PacketSize | null> {
  try {
    return await resolvePacketSize(url, o, connect_timeout_ms);
  } catch (err) {
    if (err instanceof RunInputError) throw err;
    const { reason, message } = reasonOf(err);
    if (reason === 'admission_refused') {
      said(`packets: ${o.packet_ms} ms (the default): the server refused the look at its session.created (${message})`);
      return { packet_ms: o.packet_ms, source: 'default' };
    }
    unreachable(message);
    return null;
  }
}
