import { VLLM_ACK_AFTER_END_CODE, VLLM_ACK_RACE_CODE, VLLM_CLIENT_PROTOCOL_CODES, vllmNotFoundResponseId, vllmResponseId } from '@duplex-bench/protocol';

/**
 * The rules we know of the vllm-omni and openai flows, for `check`: what their own clients do,
 * held against a trace (`{direction, time_s, event}` lines). The native dialect has its full
 * oracle (`checkNativeTrace`); these are the rules written so far, each one a line of their client
 * or server read (vllm_omni/clients/duplex.py, engine/duplex/session/playback_ledger.py,
 * docs/serving/realtime_duplex_api.md; the OpenAI Realtime API's GA flow).
 */
export interface DialectRulesResult {
  status: 'pass' | 'fail';
  violations: string[];
  /** Counts that say what the trace exercised. */
  metrics: Record<string, number>;
}

interface Line {
  direction: string;
  event: Record<string, unknown>;
}

function lines(records: readonly unknown[], violations: string[]): Line[] {
  const out: Line[] = [];
  records.forEach((r, i) => {
    const rec = r as { direction?: unknown; event?: unknown } | null;
    if (!rec || typeof rec.direction !== 'string' || rec.event === null || typeof rec.event !== 'object') {
      violations.push(`record ${i}: not a {direction, time_s, event} line`);
      return;
    }
    out.push({ direction: rec.direction, event: rec.event as Record<string, unknown> });
  });
  return out;
}

function errorCode(event: Record<string, unknown>): string | undefined {
  const error = event.error;
  if (error !== null && typeof error === 'object') {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return typeof event.code === 'string' ? event.code : undefined;
}

function errorMessage(event: Record<string, unknown>): string {
  const error = event.error;
  const message = error !== null && typeof error === 'object' ? (error as { message?: unknown }).message : event.message;
  return typeof message === 'string' ? message : '';
}

/** The response an event names (`response_id`, or its `response.id`), as the client reads it; undefined for none. */
function responseIdOf(event: Record<string, unknown>): string | undefined {
  return vllmResponseId(event) || undefined;
}

/** The client ended the session on its side: the trace's `error` record says why. */
function clientErrors(all: Line[], violations: string[]): void {
  for (const l of all) if (l.direction === 'error') violations.push(`client error: ${String(l.event.message ?? '')}`);
}

/**
 * vLLM-Omni's duplex flow: the client speaks first with `session.update`; every numbered event
 * received before `session.closed` is acknowledged by a later `session.event_ack` at or past its
 * number; no error refuses what the client sent (playback acks among them, but a first ack that
 * raced a later commit, or the end of a response that had nothing to play: counted, as their
 * runner ignores the one and the other refuses nothing the response needed); `session.close` is
 * answered with `session.closed` before the trace ends, and nothing follows `session.closed`.
 */
export function checkVllmOmniTrace(records: readonly unknown[]): DialectRulesResult {
  const violations: string[] = [];
  const all = lines(records, violations);
  clientErrors(all, violations);
  const wire = all.filter((l) => l.direction === 'send' || l.direction === 'receive');
  const firstSend = wire.find((l) => l.direction === 'send');
  const firstReceive = wire.findIndex((l) => l.direction === 'receive');
  if (firstSend?.event.type !== 'session.update') violations.push(`the client's first event is ${String(firstSend?.event.type ?? 'missing')}, not session.update (the client speaks first)`);
  if (firstReceive >= 0 && wire.findIndex((l) => l.direction === 'send') > firstReceive) violations.push('the server spoke before the client\'s session.update');
  let ackedUpTo = 0;
  const numbers: number[] = [];
  let closeSent = false;
  let closed = false;
  let acks = 0;
  let numbered = 0;
  let playbackAcks = 0;
  let raced = 0;
  let afterEnd = 0;
  // Per response: its end received, audio of it received, its first ack sent before its end was.
  const ended = new Set<string>();
  const withAudio = new Set<string>();
  const ackedBeforeEnd = new Set<string>();
  const acked = new Set<string>();
  for (const l of wire) {
    const type = String(l.event.type ?? '');
    if (closed) {
      violations.push(`${l.direction} ${type} after session.closed`);
      continue;
    }
    if (l.direction === 'send') {
      if (type === 'session.event_ack') {
        acks++;
        const n = l.event.server_event_seq;
        if (typeof n === 'number') ackedUpTo = Math.max(ackedUpTo, n);
      } else if (type === 'playback.ack') {
        playbackAcks++;
        const id = responseIdOf(l.event);
        if (id !== undefined && !acked.has(id)) {
          acked.add(id);
          if (!ended.has(id)) ackedBeforeEnd.add(id);
        }
      }
      else if (type === 'session.close') closeSent = true;
      continue;
    }
    const n = l.event.server_event_seq;
    // session.closed is the last event: the client need not acknowledge it.
    if (typeof n === 'number' && type !== 'session.closed') {
      numbered++;
      numbers.push(n);
    }
    const id = responseIdOf(l.event);
    if (id !== undefined && (type === 'response.done' || type === 'response.listen')) ended.add(id);
    if (id !== undefined && (type === 'response.output_audio.delta' || type === 'response.audio.delta')) withAudio.add(id);
    if (type === 'error') {
      const code = errorCode(l.event);
      const refused = code === VLLM_ACK_AFTER_END_CODE ? vllmNotFoundResponseId(errorMessage(l.event)) : null;
      if (code === VLLM_ACK_RACE_CODE) raced++;
      else if (refused !== null && ackedBeforeEnd.has(refused) && ended.has(refused) && !withAudio.has(refused)) afterEnd++;
      else if (code !== undefined && VLLM_CLIENT_PROTOCOL_CODES.has(code)) violations.push(`the server refused what the client sent: ${code}`);
    }
    if (type === 'session.closed') {
      if (!closeSent) violations.push('session.closed without session.close');
      closed = true;
    }
  }
  // An ack settles every number up to its own; it can only follow the events it acknowledges.
  const never = numbers.filter((n) => n > ackedUpTo);
  if (never.length > 0) violations.push(`${never.length} numbered server event(s) never acknowledged with session.event_ack (first: server_event_seq ${never[0]})`);
  if (closeSent && !closed) violations.push('session.close was not answered with session.closed');
  if (!closeSent) violations.push('the session never sent session.close (a plain disconnect holds the server\'s slot for its grace)');
  return { status: violations.length === 0 ? 'pass' : 'fail', violations, metrics: { numbered_events: numbered, event_acks: acks, playback_acks: playbackAcks, playback_ack_too_late: raced, playback_ack_after_end: afterEnd } };
}

/**
 * The OpenAI Realtime flow: the server speaks first (`session.created` before anything the client
 * sends), and the client asks for a response (`response.create`) only when none is active (a
 * `response.created` not yet followed by its `response.done`); no `error` names
 * `conversation_already_has_active_response`.
 */
export function checkOpenAITrace(records: readonly unknown[]): DialectRulesResult {
  const violations: string[] = [];
  const all = lines(records, violations);
  clientErrors(all, violations);
  const wire = all.filter((l) => l.direction === 'send' || l.direction === 'receive');
  const first = wire[0];
  if (first && !(first.direction === 'receive' && first.event.type === 'session.created')) violations.push(`the trace starts with ${first.direction} ${String(first.event.type)}, not session.created (the server speaks first)`);
  const active = new Set<string>();
  let creates = 0;
  for (const l of wire) {
    const type = String(l.event.type ?? '');
    if (l.direction === 'send') {
      if (type === 'response.create') {
        creates++;
        if (active.size > 0) violations.push(`response.create sent while response ${[...active][0]} was active`);
      }
      continue;
    }
    const id = String((l.event.response as { id?: unknown } | undefined)?.id ?? '');
    if (type === 'response.created') active.add(id);
    else if (type === 'response.done') active.delete(id);
    else if (type === 'error' && errorCode(l.event) === 'conversation_already_has_active_response') violations.push('the server refused a response.create: conversation_already_has_active_response');
  }
  return { status: violations.length === 0 ? 'pass' : 'fail', violations, metrics: { response_creates: creates } };
}
