// The fault modes of the mocks, for a command's flags: this entry loads no package (the mocks
// themselves load ws and the rest), so `serve --help` and `duplex-bench --version` stay light.
export { MOCK_FAULT_ACTIONS, mockFaultsOf } from './mock-fault';
export type { MockFault } from './mock-fault';
