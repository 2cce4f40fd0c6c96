import type { BehaviorSubject, Subscription } from 'rxjs';
import type { ConversationPlayer, PacketSource, VoiceSession } from '@duplex-bench/audio';
import type { ResponseTracker, SessionUnits } from '@duplex-bench/metrics';
import type { Connection, SessionFlow } from '@duplex-bench/transport';
import type { SessionTraceSink } from '@duplex-bench/tracer';
import type { SessionContext } from './context';
import type { InputSent } from './send/count-input';
import type { ServerErrors } from './server-errors';

/**
 * What one session knows as it goes, in one plain record that each state's work takes as its
 * argument (`open-attempt.ts`, `stream-input.ts`, `fold-result.ts`): the connection of the current
 * attempt and its flow, the grant, what was sent and received, and what ended it.
 */
export interface SessionBook {
  readonly id: string;
  readonly ctx: SessionContext;
  readonly sink: SessionTraceSink;
  /** This session's input. */
  readonly packets: PacketSource;
  /** The session's input when it follows a conversation (its packets are a ConversationPlayer). */
  readonly conversation: ConversationPlayer | null;
  readonly errors: ServerErrors;
  /** When the last attempt's connection opened and its handshake completed, clock seconds (an arrival's connect and handshake latency). */
  readonly opening: { connected_s: number | null; handshake_s: number | null };
  /** What the server granted; the output rate is the user's when given, else the grant's, else the run's assumption. */
  readonly grant: { native_unit_ms?: number; chunk_period_ms?: number; output_sample_rate: number };
  /** The input sent since packet 0. */
  readonly input: InputSent;
  conn: Connection | null;
  flow: SessionFlow;
  /** The subscriptions that read the current attempt's frames (the receive path, the flow's own). */
  reading: Subscription[];
  /** The socket broke (events$ errored): the session ends with it. */
  broken: Error | null;
  admission_refusals: number;
  /** Send start of packet 0: the input stream's origin (null until it went). */
  origin_s: number | null;
  /** The packet source said its input ended before packet_count: the stream is complete. */
  inputOver: boolean;
  /** Response figures from the input stream's start. */
  responses: ResponseTracker | null;
  /** Native: the session's units once the server granted its unit; lockstep: the count of their `unit.done`. */
  units: SessionUnits | null;
  unitsDone$: BehaviorSubject<number> | null;
  /** A conversation's model audio, to the voice activity thread. */
  voice: VoiceSession | null;
}
