import type { TimerHost } from '@duplex-bench/pacer';
import type { MockDialect, MockSettings } from './mock-dialect';
import type { MockServerOptions } from './mock-options';
import type { MockStatsRecorder } from './mock-stats';
import type { MockHost } from './openai-mock-session';
import { VllmMockSession, type VllmMockOptions, type VllmSlot } from './vllm-mock-session';

/**
 * vLLM-Omni's duplex flow on the openai names: the client speaks first, and a full server refuses
 * the opening `session.update` with `resource_exhausted` instead of the upgrade. A slot is taken by
 * that `session.update` and held by every open session and, for the grace, by one that ended
 * without `session.close`.
 */
export function vllmDialect(settings: MockSettings, options: MockServerOptions, host: MockHost, stats: MockStatsRecorder): MockDialect {
  const clock: TimerHost = host.clock;
  const vllm: VllmMockOptions = {
    output_sample_rate: settings.output_sample_rate,
    unit_ms: settings.unit_ms,
    ttfp_ms: settings.model?.ttfp_ms ?? 0,
    rtf: settings.model?.rtf ?? 0,
    silence_ms: options.openai?.silence_ms ?? 500,
    listen_every: options.openai?.listen_every ?? 0,
    config_timeout_ms: options.openai?.config_timeout_ms ?? 10_000,
    journal_max_bytes: options.openai?.journal_max_bytes ?? 8 * 2 ** 20,
    require_ref_audio: options.openai?.require_ref_audio === true,
    turn_based: options.openai?.turn_based === true,
    image_items: options.openai?.image_items === true,
    send_lag_ms: options.openai?.send_lag_ms ?? 0,
    behaviour: settings.behaviour,
    leading: settings.leading,
  };
  const limit = options.max_sessions;
  const grace_ms = options.openai?.disconnect_grace_ms ?? 30_000;
  let held = 0;
  const graceTimers = new Set<() => void>();

  const slotOf = (): VllmSlot => {
    let holding = false;
    const free = () => {
      if (!holding) return;
      holding = false;
      held--;
    };
    return {
      limit,
      take: () => {
        if (limit !== undefined && held >= limit) {
          stats.admission('refused', held);
          stats.refusedFull();
          return false;
        }
        stats.admission('accepted', held);
        holding = true;
        held++;
        return true;
      },
      released: free,
      disconnected: () => {
        stats.heldAfterDisconnect(1);
        const cancel = clock.arm(grace_ms, () => {
          graceTimers.delete(cancel);
          stats.heldAfterDisconnect(-1);
          free();
        });
        graceTimers.add(cancel);
      },
    };
  };

  return {
    refuses_upgrade_when_full: false,
    open: (ws, id, fault) => {
      const session = new VllmMockSession(ws, host, id, vllm, slotOf(), fault);
      return {
        session,
        start: () => undefined,
        closed: () => {
          stats.blockedTurns(session.blocked_turns);
          stats.protocolViolations(session.violations);
          stats.frames(session.frames);
          session.onSocketClose();
        },
      };
    },
    close: () => {
      for (const cancel of graceTimers) cancel();
    },
  };
}
