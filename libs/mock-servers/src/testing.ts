// Test servers with injected faults. Not part of the main face: import from '@duplex-bench/mock-servers/testing'.
import { startAppendEchoMock, type AppendEchoOptions, type MockFault, type MockServer } from './append-echo';

export type { MockFault } from './append-echo';

/** An append-echo mock that misbehaves on every session once it has taken `fault.after_appends` appends. */
export function startFaultyMock(fault: MockFault, options: AppendEchoOptions = {}): Promise<MockServer> {
  return startAppendEchoMock(options, fault);
}
