export { startMockServer } from './mock-server';
export type { MockServerOptions, MockServer, MockStats, MockProfile } from './mock-server';
export type { ModelOptions } from './model-session';
export type { OpenAIMockOptions } from './openai-mock-session';
export { SERVE_COMMAND } from './serve-command';
export { parseServeOptions, SERVE_FLAGS } from './serve-options';
export type { ServeOptions } from './serve-options';
export { startHttpStub, HTTP_STUB_DEFAULTS } from './http/http-stub';
export type { HttpStub, HttpStubKind, HttpStubOptions, HttpStubStats } from './http/http-stub';
