import { reasonOf } from './outcome';
import { readTurns } from './read-turns';
import type { SessionResult } from './result';
import type { SessionBook } from './session-book';

/**
 * The session's result, folded from what its parts counted: server errors, admission, the grant,
 * the dialect's own counts, the response figures, a conversation's turns. What ended an incomplete
 * session goes into its trace (in every trace mode); the trace closes last, and a trace that could
 * not be written makes a complete session incomplete.
 */
export async function foldResult(result: SessionResult, p: SessionBook): Promise<SessionResult> {
  const { flow, grant } = p;
  p.units?.finish();
  p.errors.fold(result);
  if (p.admission_refusals > 0) result.admission_refusals = p.admission_refusals;
  const rates = flow.deltaSampleRates?.();
  if (rates) result.delta_sample_rates = rates;
  if (grant.native_unit_ms !== undefined) result.native_unit_ms = grant.native_unit_ms;
  const clock = p.ctx.clock;
  if (p.conversation && p.origin_s !== null) await readTurns(result, p.conversation, { id: p.id, origin_s: p.origin_s, end_s: clock.now_s(), voice: p.voice, behaviour: p.ctx.behaviour });
  else p.voice?.end().catch(() => undefined); // a session that never streamed: its VAD state goes
  if (!result.completed) p.sink.error(`${result.reason ?? 'incomplete'}: ${result.message ?? ''}`, clock.now_s());
  const seq = flow.serverEventSeq();
  if (seq) result.server_event_seq = seq;
  const own = flow.dialectEvents();
  if (own) result.dialect_events = own;
  if (grant.chunk_period_ms !== undefined) result.server_chunk_period_ms = grant.chunk_period_ms;
  result.output_sample_rate = grant.output_sample_rate;
  // A session the server answered keeps its stream figures even with no finished response:
  // dropping it would leave only the sessions that got that far (survivorship).
  if (p.responses?.answered) {
    result.responses = p.responses.done;
    result.response_metrics = p.responses.metrics();
  }
  try {
    await p.sink.close();
  } catch (err) {
    if (result.completed) Object.assign(result, { completed: false }, reasonOf(err));
  }
  return result;
}
