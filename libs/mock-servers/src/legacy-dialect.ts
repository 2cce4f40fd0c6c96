import type { MockDialect, MockSettings } from './mock-dialect';
import { LegacyMockSession, type LegacyMockOptions } from './legacy-mock-session';
import type { MockHost } from './openai-mock-session';

/**
 * sglang-omni's legacy turn-based protocol (`--profile qwen3-omni-half-duplex`): the server speaks
 * first, finds and answers the user's turns by its VAD, and never closes a session itself; the
 * client closes the socket (1000: completed). A full server refuses the upgrade with HTTP 503, as
 * sglang-omni's server does for its other sessions (their client retries it the same way).
 */
export function legacyDialect(settings: MockSettings, host: MockHost): MockDialect {
  const model = settings.model;
  if (!model) throw new RangeError('the legacy dialect is a model mock: it needs the profile timings');
  const options: LegacyMockOptions = {
    input_sample_rate: settings.input_sample_rate,
    output_sample_rate: settings.output_sample_rate,
    delta_ms: settings.unit_ms * model.burst_units,
    model,
    leading: settings.leading,
    smart_turn: true,
  };
  return {
    refuses_upgrade_when_full: true,
    open: (ws, id, fault) => {
      const session = new LegacyMockSession(ws, host, id, options, settings.output_payload, fault);
      return {
        session,
        start: () => session.start(),
        closed: (code) => {
          if (code === 1000) host.completed();
          session.dispose();
        },
      };
    },
    close: () => undefined,
  };
}
