import type { ReceivedEvent, SessionFlow } from '@duplex-bench/transport';

/** The stage that counts received types the dialect does not define (`summary.events.unknown`): counted, never refused. */
export function countUnknownTypes(flow: () => Pick<SessionFlow, 'isKnownType'>, counts: Map<string, number>): (e: ReceivedEvent) => void {
  return (e) => {
    const type = e.frame.type;
    if (type !== 'error' && !flow().isKnownType(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  };
}
