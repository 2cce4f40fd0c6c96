export { startMockServer } from './mock-server';
export type { MockServerOptions, MockServer, MockStats, MockProfile } from './mock-server';
export type { ModelOptions } from './model-session';
export type { OpenAIMockOptions } from './openai-mock-session';
