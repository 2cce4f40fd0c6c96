export { startAppendEchoMock } from './append-echo';
export type { AppendEchoOptions, MockServer, MockStats } from './append-echo';
export type { ModelOptions } from './model-session';
